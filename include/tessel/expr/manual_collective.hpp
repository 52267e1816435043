#pragma once
// Explicit collectives over named mesh axes, for code inside shard_map (runtime/shard_map.hpp):
// jax.lax.psum, pmax, pmin, pmean, all_gather, psum_scatter, all_to_all and ppermute. Inside
// shard_map every value is a device's own block (a tensor of the local shape whose replicas
// differ); these are the only nodes that move data between devices there, and they run exactly
// as written: one collective per call over the groups of the named axes (the planner adds none).
// A group's member k is the device whose coordinates on the named axes, read as one mixed-radix
// number (first axis most significant), equal k: lax::axis_index's numbering.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tessel/core/partition_spec.hpp"
#include "tessel/expr/elementwise.hpp"
#include "tessel/expr/node.hpp"
#include "tessel/expr/ops.hpp"

namespace tessel {

enum class ManualKind : std::uint8_t { psum, pmax, pmin, all_gather, psum_scatter, all_to_all, ppermute };

// What one explicit collective does, resolved against the shard_map's mesh when it is built.
struct ManualCollectiveSpec {
  ManualKind kind = ManualKind::psum;
  FixedVector<std::uint8_t, max_mesh_axes> mesh_axes;  // indices of the named axes, in the order named
  int group = 1;                                       // members per group: the product of their sizes
  std::uint32_t split = 0;  // bit a for each named axis a of more than one device (what can differ)
  std::uint8_t dim = 0;   // all_gather: axis; psum_scatter: scatter_dimension; all_to_all: split_axis
  std::uint8_t dim2 = 0;  // all_to_all: concat_axis
  bool tiled = false;
  std::vector<std::pair<int, int>> perm;  // ppermute: (source, target) members

  friend bool operator==(ManualCollectiveSpec const&, ManualCollectiveSpec const&) = default;
};

// "psum", "all_gather", ...: the op's name in explain and in labels.
char const* manual_name(ManualKind kind);

// The mesh axes along which the result may differ between devices, from its operand's: a psum,
// pmax, pmin or all_gather makes it equal along its axes; a psum_scatter or all_to_all makes it
// differ; a ppermute keeps the operand's when every member receives (a permutation of equal
// values is equal) and makes it differ when some member gets zeros. shard_map's replication
// check reads this (runtime/shard_map.hpp).
std::uint32_t manual_varying(ManualCollectiveSpec const& spec, std::uint32_t operand);

struct ManualCollective {
  static constexpr NodeKind kind = NodeKind::manual_collective;
  struct Data {
    ManualCollectiveSpec spec;
    Shape shape;
  };
  template <class Child>
  using value_type = expr_value_t<Child>;
  static Shape const& shape(Data const& d) { return d.shape; }
  static char const* name(Data const& d) { return manual_name(d.spec.kind); }
  static void describe(Data const& d, auto& node, auto&) {
    node.manual = d.spec;
    node.varying = manual_varying(d.spec, node.varying);
  }
  static void sign(Data const& d, Shape const&, auto& sink) {
    sink.word(static_cast<std::uint64_t>(d.spec.kind));
    for (auto a : d.spec.mesh_axes) sink.word(a);
    sink.word(d.spec.split);
    sink.word(d.spec.dim | (std::uint64_t{d.spec.dim2} << 8) | (std::uint64_t{d.spec.tiled} << 16));
    for (auto [s, t] : d.spec.perm) sink.word(static_cast<std::uint64_t>(s) << 32 | static_cast<std::uint32_t>(t));
    sink.word(0xffff);
  }
};
template <class Child>
using ManualCollectiveNode = Node<ManualCollective, Child>;

namespace detail {
// What a call names, before it is resolved against the running shard_map's mesh.
struct ManualRequest {
  char const* op;  // the user's function: "lax::psum", ...
  ManualKind kind;
  DimSpec axes;    // one axis name or several
  int dim = 0, dim2 = 0;
  bool tiled = false;
  std::vector<std::pair<int, int>> perm{};
};
// Resolves the request against the running shard_map's mesh and checks it against the operand's
// shape; returns the spec and the result's shape. Fails naming the op, the axis, the dimension
// and the sizes (outside shard_map: the axis is unbound, as in JAX).
std::pair<ManualCollectiveSpec, Shape> manual_collective(ManualRequest request, Shape const& operand);
}  // namespace detail

namespace lax {

// One mesh axis name ("mp") or several ({"dp", "mp"}, a group over both, dp major).
using AxisNames = DimSpec;

namespace detail {
template <class X>
auto manual_node(X const& x, tessel::detail::ManualRequest request) {
  auto n = as_node(x);
  static_assert(!std::same_as<expr_value_t<decltype(n)>, bool>, "tessel: a collective of a comparison after astype<>()");
  auto [spec, shape] = tessel::detail::manual_collective(std::move(request), n.shape());
  return ManualCollectiveNode<decltype(n)>{{n}, {std::move(spec), std::move(shape)}};
}
template <class X>
concept Collectible = Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>;
}  // namespace detail

// jax.lax.psum: every device of a group gets the sum of the group's blocks (summed in member order).
template <detail::Collectible X>
auto psum(X const& x, AxisNames const& axes) {
  return detail::manual_node(x, {"lax::psum", ManualKind::psum, axes});
}
// jax.lax.pmax / pmin: the elementwise maximum / minimum over the group (NaN propagates).
template <detail::Collectible X>
auto pmax(X const& x, AxisNames const& axes) {
  return detail::manual_node(x, {"lax::pmax", ManualKind::pmax, axes});
}
template <detail::Collectible X>
auto pmin(X const& x, AxisNames const& axes) {
  return detail::manual_node(x, {"lax::pmin", ManualKind::pmin, axes});
}
// jax.lax.pmean: psum divided by the group's size (true division: int32 gives float32, as in JAX).
template <detail::Collectible X>
auto pmean(X const& x, AxisNames const& axes) {
  auto s = detail::manual_node(x, {"lax::pmean", ManualKind::psum, axes});
  double const n = s.data.spec.group;
  return s / n;
}

struct GatherOptions {
  int axis = 0;        // where the gathered blocks go (a new dimension there unless tiled)
  bool tiled = false;  // concatenate along `axis` instead of stacking along a new one
};
// jax.lax.all_gather(x, axis_name, axis=, tiled=): every device gets every member's block, stacked
// (or concatenated) in member order.
template <detail::Collectible X>
auto all_gather(X const& x, AxisNames const& axes, GatherOptions options = {}) {
  return detail::manual_node(x, {"lax::all_gather", ManualKind::all_gather, axes, options.axis, 0, options.tiled});
}

struct ScatterOptions {
  int scatter_dimension = 0;
  bool tiled = false;  // keep the dimension (divided by the group size) instead of removing it
};
// jax.lax.psum_scatter: the group's sum, member k keeping the k-th piece of `scatter_dimension`
// (which must then have the group's size, or with tiled be divisible by it).
template <detail::Collectible X>
auto psum_scatter(X const& x, AxisNames const& axes, ScatterOptions options = {}) {
  return detail::manual_node(
      x, {"lax::psum_scatter", ManualKind::psum_scatter, axes, options.scatter_dimension, 0, options.tiled});
}

// jax.lax.all_to_all: each device splits `split_axis` into group-size pieces, sends piece k to
// member k, and concatenates what it receives along `concat_axis` in member order (tiled), or
// (not tiled: split_axis must have the group's size) drops split_axis and stacks the pieces along
// a new `concat_axis`.
template <detail::Collectible X>
auto all_to_all(X const& x, AxisNames const& axes, int split_axis, int concat_axis, bool tiled = false) {
  return detail::manual_node(x, {"lax::all_to_all", ManualKind::all_to_all, axes, split_axis, concat_axis, tiled});
}

// jax.lax.ppermute: member `target` of each pair gets member `source`'s block; members that are
// no pair's target get zeros. Each member is the source of at most one pair and the target of at
// most one.
template <detail::Collectible X>
auto ppermute(X const& x, AxisNames const& axes, std::vector<std::pair<int, int>> perm) {
  return detail::manual_node(x, {"lax::ppermute", ManualKind::ppermute, axes, 0, 0, false, std::move(perm)});
}

}  // namespace lax
}  // namespace tessel
