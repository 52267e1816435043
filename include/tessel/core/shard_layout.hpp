#pragma once
// How a PartitionSpec tiles a tensor over mesh axes, resolved to axis indices: the per-device
// slice arithmetic (which global index range each mesh position holds). Pure constexpr value
// code: it runs at compile time for constant meshes, specs and shapes, and at run time otherwise.
#include <cstddef>
#include <cstdint>

#include "tessel/core/box.hpp"
#include "tessel/core/mesh_axes.hpp"
#include "tessel/core/message.hpp"
#include "tessel/core/partition_spec.hpp"
#include "tessel/core/shape.hpp"

namespace tessel {

namespace detail {
// Not constexpr: when the checks run in a constant expression, reaching one is a compile error
// that names the failed check (and TESSEL_STATIC_CHECK prints the message itself).
[[noreturn]] void throw_unknown_axis(Message const& message);
[[noreturn]] void throw_axis_used_twice(Message const& message);
[[noreturn]] void throw_spec_longer_than_rank(Message const& message);
}  // namespace detail

class ShardLayout {
 public:
  using AxisList = FixedVector<std::uint8_t, max_mesh_axes>;

  // Resolves the spec's axis names against the mesh; fails naming the axis when one is unknown or
  // used twice. Does not look at any tensor shape yet.
  constexpr ShardLayout(MeshAxes const& mesh, PartitionSpec const& spec) : mesh_(mesh), spec_(spec) {
    Failure f = resolve();
    if (f.kind == Failure::unknown_axis) detail::throw_unknown_axis(message(f, nullptr));
    if (f.kind == Failure::axis_used_twice) detail::throw_axis_used_twice(message(f, nullptr));
  }

  // Checks that the layout can tile a tensor of this shape: the spec is no longer than the rank.
  // Any size tiles: a dimension of size n split k ways gives each device a block of ceil(n/k)
  // (box below), so the last devices' shards can be short or empty.
  constexpr void check_shape(Shape const& shape) const {
    Failure f = shape_failure(shape);
    if (f.kind == Failure::spec_longer_than_rank) detail::throw_spec_longer_than_rank(message(f, &shape));
  }

  // What check_shape and the constructor would throw, as a message (empty when the spec is valid
  // on the mesh and, if given, tiles the shape): for checks made at compile time.
  // (By reference, never a pointer tested against null: a build with sanitizers cannot compare a
  // global's address in a constant expression.)
  static constexpr Message error(MeshAxes const& mesh, PartitionSpec const& spec) {
    ShardLayout layout(mesh, spec, Unchecked{});
    Failure f = layout.resolve();
    return f.kind == Failure::none ? Message() : layout.message(f, nullptr);
  }
  static constexpr Message error(MeshAxes const& mesh, PartitionSpec const& spec, Shape const& shape) {
    ShardLayout layout(mesh, spec, Unchecked{});
    Failure f = layout.resolve();
    if (f.kind == Failure::none) f = layout.shape_failure(shape);
    return f.kind == Failure::none ? Message() : layout.message(f, &shape);
  }

  [[nodiscard]] constexpr MeshAxes const& mesh() const { return mesh_; }
  [[nodiscard]] constexpr PartitionSpec const& spec() const { return spec_; }
  // Mesh axes dimension d is split over (empty past the end of the spec).
  [[nodiscard]] constexpr AxisList dim_axes(std::size_t d) const { return d < dims_.size() ? dims_[d] : AxisList{}; }
  [[nodiscard]] constexpr std::int64_t shards_along(std::size_t d) const {
    std::int64_t n = 1;
    for (auto a : dim_axes(d)) n *= mesh_.size(a);
    return n;
  }
  [[nodiscard]] constexpr bool uses_axis(std::size_t axis) const {
    for (auto const& axes : dims_)
      for (auto a : axes)
        if (a == axis) return true;
    return false;
  }
  // How many mesh positions hold each shard (product of the axes no dimension uses).
  [[nodiscard]] constexpr int replication() const {
    int n = 1;
    for (std::size_t a = 0; a < mesh_.num_axes(); ++a)
      if (!uses_axis(a)) n *= mesh_.size(a);
    return n;
  }
  [[nodiscard]] constexpr bool fully_replicated() const { return replication() == mesh_.num_devices(); }

  // The block each device is allotted along every dimension: ceil(n/k) for a dimension of size n
  // split k ways (the XLA/Shardy rule). Device 0's shard has this shape; a later device's shard is
  // its box, which stops at the dimension's end (shorter, or empty).
  [[nodiscard]] constexpr std::int64_t block(Shape const& global, std::size_t d) const {
    std::int64_t k = shards_along(d);
    return (global[d] + k - 1) / k;
  }
  [[nodiscard]] constexpr Shape block_shape(Shape const& global) const {
    Shape s;
    for (std::size_t d = 0; d < global.size(); ++d) s.push_back(block(global, d));
    return s;
  }
  // Whether every device's shard is a whole block (every sharded dimension divides evenly).
  [[nodiscard]] constexpr bool even(Shape const& global) const {
    for (std::size_t d = 0; d < global.size(); ++d)
      if (global[d] % shards_along(d) != 0) return false;
    return true;
  }
  // The shape of the shard the mesh position `flat` holds.
  [[nodiscard]] constexpr Shape shard_shape(Shape const& global, int flat) const { return box(global, flat).extent(); }

  // Which shard along each dimension the mesh position `flat` holds: the mixed-radix number its
  // coordinates on that dimension's axes form, first axis most significant.
  [[nodiscard]] constexpr FixedVector<std::int64_t, max_rank> tile_index(int flat, std::size_t rank) const {
    auto coords = mesh_.coords(flat);
    FixedVector<std::int64_t, max_rank> t;
    for (std::size_t d = 0; d < rank; ++d) {
      std::int64_t i = 0;
      for (auto a : dim_axes(d)) i = i * mesh_.size(a) + coords[a];
      t.push_back(i);
    }
    return t;
  }

  // The global index range the mesh position `flat` holds: its tile's block, cut at the end of
  // each dimension (empty for the tiles past it).
  [[nodiscard]] constexpr Box box(Shape const& global, int flat) const {
    auto tile = tile_index(flat, global.size());
    Box b;
    for (std::size_t d = 0; d < global.size(); ++d) {
      std::int64_t n = global[d], size = block(global, d);
      std::int64_t start = tile[d] * size < n ? tile[d] * size : n;
      std::int64_t stop = start + size < n ? start + size : n;
      b.push_back({start, stop});
    }
    return b;
  }

  friend constexpr bool operator==(ShardLayout const& a, ShardLayout const& b) {
    if (!(a.mesh_ == b.mesh_)) return false;
    std::size_t n = a.dims_.size() > b.dims_.size() ? a.dims_.size() : b.dims_.size();
    for (std::size_t d = 0; d < n; ++d)
      if (!(a.dim_axes(d) == b.dim_axes(d))) return false;
    return true;
  }

 private:
  struct Unchecked {};
  // Where a check failed (its message is made only then: a Message is large, and layouts are made
  // often, also by the compiler planning static_jit functions).
  struct Failure {
    enum Kind { none, unknown_axis, axis_used_twice, spec_longer_than_rank } kind = none;
    std::size_t dim = 0, other = 0;  // the dimension (and the earlier one using the same axis)
    AxisName name{};                 // the axis
  };
  constexpr ShardLayout(MeshAxes const& mesh, PartitionSpec const& spec, Unchecked) : mesh_(mesh), spec_(spec) {}

  // Fills dims_ with the spec's axes as mesh axis indices; the first failure, if any.
  constexpr Failure resolve() {
    dims_.clear();
    for (std::size_t d = 0; d < spec_.size(); ++d) {
      AxisList axes;
      for (AxisName const& name : spec_[d].axes()) {
        auto axis = mesh_.find(name);
        if (!axis) return {Failure::unknown_axis, d, d, name};
        for (std::size_t e = 0; e <= d; ++e) {
          auto const& earlier = e < d ? dims_[e] : axes;
          for (auto a : earlier)
            if (a == *axis) return {Failure::axis_used_twice, d, e, name};
        }
        axes.push_back(static_cast<std::uint8_t>(*axis));
      }
      dims_.push_back(axes);
    }
    return {};
  }

  [[nodiscard]] constexpr Failure shape_failure(Shape const& shape) const {
    (void)shape.num_elements();  // negative dimensions and overflowing counts fail here
    if (spec_.size() > shape.size()) return {Failure::spec_longer_than_rank};
    return {};
  }

  // The failure's message, in the words of the run-time errors.
  [[nodiscard]] constexpr Message message(Failure const& f, Shape const* shape) const {
    Message m;
    switch (f.kind) {
      case Failure::none: break;
      case Failure::unknown_axis:
        m << spec_ << " names mesh axis '" << f.name.view() << "', which is not in the mesh " << mesh_;
        break;
      case Failure::axis_used_twice:
        if (f.other == f.dim)
          m << spec_ << " uses mesh axis '" << f.name.view() << "' twice in dimension " << f.dim
            << "; a mesh axis may shard at most one dimension, once";
        else
          m << spec_ << " uses mesh axis '" << f.name.view() << "' for both dimension " << f.other << " and dimension "
            << f.dim << "; a mesh axis may shard at most one dimension";
        break;
      case Failure::spec_longer_than_rank:
        m << spec_ << " has " << spec_.size() << " entries but the tensor of shape " << *shape << " has rank "
          << shape->size();
        break;
    }
    return m;
  }

  MeshAxes mesh_;
  PartitionSpec spec_;
  FixedVector<AxisList, max_rank> dims_;
};

}  // namespace tessel
