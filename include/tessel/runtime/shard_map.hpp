#pragma once
// jax.shard_map: per-device code with explicit collectives. shard_map(f, mesh, in_specs,
// out_specs)(args...) puts each argument on NamedSharding(mesh, in_spec) and calls f once with
// every device's block as one tensor of the local shape (a tensor replicated on the mesh whose
// replicas differ). Inside f, expressions are planned, fused and run like any other, per device
// and with no collective beyond the ones f writes (lax::psum, all_gather, ppermute, ...,
// expr/manual_collective.hpp); lax::axis_index gives each device its coordinate. The blocks f
// returns are laid out as out_specs says: dimension d of the global result is the block's times
// the sizes of the mesh axes out_specs names for it.
//
// The replication check: a result may leave a mesh axis out of its out_spec (be replicated along
// it) only when its blocks are equal along that axis. A value differs along axis a when it is
// computed from an argument split over a, from lax::axis_index(a), or by a psum_scatter or
// all_to_all over a, or by a ppermute over a in which some device receives nothing; a psum, pmax,
// pmin, pmean or all_gather over a makes it equal along a again, and so does a ppermute in which
// every device receives (a permutation of equal blocks). This accepts programs JAX's check
// refuses (a ppermute of a psum's result, say) and refuses none that are correct by these rules.
//
// A shard_map is one more kind of instruction list, not a different system: nested in jit (a
// jitted function may call a shard_map) or nesting jit (f may call jitted functions), explain
// shows every plan the body runs; visualize_array_sharding shows a block inside f as per-device.
#include <cstddef>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/core/mesh.hpp"
#include "tessel/core/named_sharding.hpp"
#include "tessel/expr/manual_collective.hpp"
#include "tessel/runtime/device_put.hpp"
#include "tessel/runtime/evaluate.hpp"
#include "tessel/runtime/shard_map_scope.hpp"

namespace tessel {

namespace detail {
using ImplPtr = std::shared_ptr<TensorImpl const>;
// Argument `arg` (already on `sharding`) as per-device blocks: the same shards, seen as one tensor
// of the local shape replicated on the mesh, differing along the axes its spec splits.
ImplPtr local_blocks(ImplPtr const& global, NamedSharding const& sharding, std::size_t arg);
// Output `output`'s blocks laid out as `spec` says, after the replication check.
ImplPtr assemble_blocks(ImplPtr local, Mesh const& mesh, PartitionSpec const& spec, std::size_t output);
void check_shard_map_arity(char const* what, std::size_t specs, std::size_t values);

// "shard_map over MESH: in_specs (...) -> out_specs (...)", recorded when a ShardMapExplainer watches.
void record_shard_map(Mesh const& mesh, std::vector<PartitionSpec> const& in, std::vector<PartitionSpec> const& out);

template <class T>
inline constexpr bool is_tuple_v = false;
template <class... T>
inline constexpr bool is_tuple_v<std::tuple<T...>> = true;
}  // namespace detail

template <class F>
class ShardMapped {
 public:
  ShardMapped(F f, Mesh mesh, std::vector<PartitionSpec> in_specs, std::vector<PartitionSpec> out_specs)
      : f_(std::move(f)), mesh_(std::move(mesh)), in_(std::move(in_specs)), out_(std::move(out_specs)) {}

  // Runs f on every device's blocks; one tensor per out_spec (a std::tuple when f returns one).
  template <class... Args>
  auto operator()(Args const&... args) const {
    detail::check_shard_map_arity("in_specs", in_.size(), sizeof...(Args));
    detail::not_replayable("shard_map");  // its body runs per device, under its own scope
    return call(std::index_sequence_for<Args...>{}, args...);
  }

  // Runs a call and returns what ran: the mesh and specs, then every plan the body evaluated, in
  // order, with the collectives it wrote (the arguments' placement first, if they needed one).
  template <class... Args>
  [[nodiscard]] std::string explain(Args const&... args) const {
    detail::ShardMapExplainer watch;
    (void)(*this)(args...);
    return watch.text();
  }

  [[nodiscard]] Mesh const& mesh() const { return mesh_; }

 private:
  template <class T>
    requires std::is_arithmetic_v<T>
  T const& local(T const& x, std::size_t) const {  // C++ scalars pass as they are
    return x;
  }
  template <Expression E>
  auto local(E const& e, std::size_t i) const {  // an expression is evaluated first, as a tensor
    return local(eval(e), i);
  }
  template <Element T>
  Tensor<T> local(Tensor<T> const& x, std::size_t i) const {
    NamedSharding s(mesh_, in_[i]);
    Tensor<T> placed = device_put(x, s);  // as jit's in_shardings: moved there first
    return Tensor<T>(detail::local_blocks(placed.impl_ptr(), s, i));
  }

  template <Element T>
  Tensor<T> global(Tensor<T> const& t, std::size_t k) const {
    return Tensor<T>(detail::assemble_blocks(t.impl_ptr(), mesh_, out_[k], k));
  }
  template <class R>
  auto finish(R const& r, std::size_t k) const {
    if constexpr (Expression<R>) return global(eval(r), k);
    else {
      static_assert(is_tensor_v<R>, "tessel: a shard_map body returns an expression, a Tensor, or a std::tuple of them");
      return global(r, k);
    }
  }

  template <std::size_t... I, class... Args>
  auto call(std::index_sequence<I...>, Args const&... args) const {
    if (detail::shard_map_recorder) [[unlikely]]
      detail::record_shard_map(mesh_, in_, out_);
    detail::ShardMapScope scope(mesh_);
    auto r = f_(local(args, I)...);
    using R = decltype(r);
    if constexpr (detail::is_tuple_v<R>) {
      detail::check_shard_map_arity("out_specs", out_.size(), std::tuple_size_v<R>);
      return [&]<std::size_t... K>(std::index_sequence<K...>) {
        return std::make_tuple(finish(std::get<K>(r), K)...);
      }(std::make_index_sequence<std::tuple_size_v<R>>{});
    } else {
      detail::check_shard_map_arity("out_specs", out_.size(), 1);
      return finish(r, 0);
    }
  }

  F f_;
  Mesh mesh_;
  std::vector<PartitionSpec> in_;
  std::vector<PartitionSpec> out_;
};

// jax.shard_map(f, mesh=, in_specs=, out_specs=): one in_spec per argument, one out_spec for a
// single result.
template <class F>
ShardMapped<F> shard_map(F f, Mesh mesh, std::vector<PartitionSpec> in_specs, PartitionSpec out_specs) {
  return ShardMapped<F>(std::move(f), std::move(mesh), std::move(in_specs), {std::move(out_specs)});
}
// ... and one out_spec per element of the std::tuple f returns.
template <class F>
ShardMapped<F> shard_map(F f, Mesh mesh, std::vector<PartitionSpec> in_specs, std::vector<PartitionSpec> out_specs) {
  return ShardMapped<F>(std::move(f), std::move(mesh), std::move(in_specs), std::move(out_specs));
}

namespace lax {
// jax.lax.axis_index: inside shard_map, each device's coordinate along the named axes (several:
// one mixed-radix number, first axis most significant), as an int32 scalar tensor.
Tensor<std::int32_t> axis_index(AxisNames const& axes);
}  // namespace lax

}  // namespace tessel
