#pragma once
// NamedSharding (jax.sharding.NamedSharding): a mesh and a PartitionSpec over its axis names.
#include <string>
#include <utility>
#include <vector>

#include "tessel/core/box.hpp"
#include "tessel/core/mesh.hpp"
#include "tessel/core/partition_spec.hpp"
#include "tessel/core/shard_layout.hpp"

namespace tessel {

class NamedSharding {
 public:
  // Fails, naming the axis, when the spec names an axis the mesh lacks or uses one twice.
  constexpr NamedSharding(Mesh mesh, PartitionSpec spec) : mesh_(mesh), layout_(mesh_.axes(), spec) {}

  [[nodiscard]] constexpr Mesh const& mesh() const { return mesh_; }
  [[nodiscard]] constexpr PartitionSpec const& spec() const { return layout_.spec(); }
  [[nodiscard]] constexpr ShardLayout const& layout() const { return layout_; }
  [[nodiscard]] constexpr bool is_fully_replicated() const { return layout_.fully_replicated(); }
  // The same layout over another mesh with the same axes (binding an abstract mesh's plan).
  [[nodiscard]] NamedSharding with_devices(Mesh const& devices) const {
    return NamedSharding(mesh_.with_devices(devices), layout_);
  }

  // Fails, naming the spec and the shape, when the spec is longer than the rank of `shape`.
  constexpr void check_shape(Shape const& shape) const { layout_.check_shape(shape); }
  // The block each device is allotted (ceil(n/k) per split dimension; device 0's shard shape) and
  // the shape of the shard at mesh position `flat` (shorter or empty past a dimension's end).
  [[nodiscard]] constexpr Shape block_shape(Shape const& global) const { return layout_.block_shape(global); }
  [[nodiscard]] constexpr Shape shard_shape(Shape const& global, int flat) const {
    return layout_.shard_shape(global, flat);
  }
  // jax's Sharding.devices_indices_map: each device of the mesh (in mesh order) with the global
  // index range it holds.
  [[nodiscard]] std::vector<std::pair<int, Box>> devices_indices_map(Shape const& global) const;

  // Same mesh and same tiling (P("dp") and P("dp", None) are equivalent, as in JAX).
  friend constexpr bool operator==(NamedSharding const& a, NamedSharding const& b) {
    return a.mesh_ == b.mesh_ && a.layout_ == b.layout_;
  }

 private:
  constexpr NamedSharding(Mesh mesh, ShardLayout layout) : mesh_(mesh), layout_(layout) {}
  Mesh mesh_;
  ShardLayout layout_;
};

// A sharding that puts a whole copy on every device of the mesh (NamedSharding(mesh, P())).
constexpr NamedSharding replicated(Mesh const& mesh) { return NamedSharding(mesh, P()); }

// "NamedSharding(mesh=('dp': 4, 'mp': 2), spec=P('dp', None))"
std::string to_string(NamedSharding const& sharding);

namespace detail {
// The mesh of one device, for tensors placed without a sharding (JAX's default device;
// src/core/mesh.cpp).
NamedSharding single_device_sharding(int device_id = 0);
// Device 0's, as a constant.
constexpr NamedSharding device_zero_sharding() { return NamedSharding(Mesh::device_zero(), P()); }
}  // namespace detail

}  // namespace tessel
