#pragma once
// How a PartitionSpec tiles a tensor over mesh axes, resolved to axis indices: the per-device
// slice arithmetic (which global index range each mesh position holds). Pure constexpr value
// code: it runs at compile time for constant meshes, specs and shapes, and at run time otherwise.
#include <cstddef>
#include <cstdint>

#include "tessel/core/box.hpp"
#include "tessel/core/mesh_axes.hpp"
#include "tessel/core/partition_spec.hpp"
#include "tessel/core/shape.hpp"

namespace tessel {

namespace detail {
[[noreturn]] void throw_unknown_axis(PartitionSpec const& spec, std::string_view axis, MeshAxes const& mesh);
[[noreturn]] void throw_axis_used_twice(PartitionSpec const& spec, std::string_view axis, std::size_t first_dim,
                                        std::size_t second_dim);
[[noreturn]] void throw_spec_longer_than_rank(PartitionSpec const& spec, Shape const& shape);
[[noreturn]] void throw_indivisible(PartitionSpec const& spec, Shape const& shape, std::size_t dim,
                                    MeshAxes const& mesh, std::int64_t product);
}  // namespace detail

class ShardLayout {
 public:
  using AxisList = FixedVector<std::uint8_t, max_mesh_axes>;

  // Resolves the spec's axis names against the mesh; fails naming the axis when one is unknown or
  // used twice. Does not look at any tensor shape yet.
  constexpr ShardLayout(MeshAxes const& mesh, PartitionSpec const& spec) : mesh_(mesh), spec_(spec) {
    for (std::size_t d = 0; d < spec.size(); ++d) {
      AxisList axes;
      for (AxisName const& name : spec[d].axes()) {
        auto axis = mesh.find(name.view());
        if (!axis) detail::throw_unknown_axis(spec, name.view(), mesh);
        for (std::size_t e = 0; e <= d; ++e) {
          auto const& earlier = e < d ? dims_[e] : axes;
          for (auto a : earlier)
            if (a == *axis) detail::throw_axis_used_twice(spec, name.view(), e, d);
        }
        axes.push_back(static_cast<std::uint8_t>(*axis));
      }
      dims_.push_back(axes);
    }
  }

  // Checks that the layout can tile a tensor of this shape: the spec is no longer than the rank
  // and every sharded dimension is divisible by the product of its axes. tessel refuses uneven
  // shardings rather than padding (see README).
  constexpr void check_shape(Shape const& shape) const {
    if (spec_.size() > shape.size()) detail::throw_spec_longer_than_rank(spec_, shape);
    for (std::size_t d = 0; d < dims_.size(); ++d) {
      std::int64_t n = shards_along(d);
      if (shape[d] % n != 0) detail::throw_indivisible(spec_, shape, d, mesh_, n);
    }
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

  [[nodiscard]] constexpr Shape shard_shape(Shape const& global) const {
    Shape s;
    for (std::size_t d = 0; d < global.size(); ++d) s.push_back(global[d] / shards_along(d));
    return s;
  }

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

  // The global index range the mesh position `flat` holds.
  [[nodiscard]] constexpr Box box(Shape const& global, int flat) const {
    auto tile = tile_index(flat, global.size());
    Box b;
    for (std::size_t d = 0; d < global.size(); ++d) {
      std::int64_t block = global[d] / shards_along(d);
      b.push_back({tile[d] * block, (tile[d] + 1) * block});
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
  MeshAxes mesh_;
  PartitionSpec spec_;
  FixedVector<AxisList, max_rank> dims_;
};

}  // namespace tessel
