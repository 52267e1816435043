#pragma once
// Which shard_map's body is being traced on this thread: explicit collectives
// (expr/manual_collective.hpp) resolve their axis names against its mesh, and lax::axis_index
// numbers devices on it. runtime/shard_map.hpp opens the scope around the body it runs.
#include "tessel/core/mesh.hpp"

namespace tessel::detail {

// The mesh of the shard_map whose body runs on this thread; nullptr outside any.
Mesh const* active_shard_map_mesh();

// Marks a body as running for its lifetime. A shard_map inside another's body is refused (naming
// both meshes): tessel's manual regions do not nest.
class ShardMapScope {
 public:
  explicit ShardMapScope(Mesh const& mesh);
  ~ShardMapScope();
  ShardMapScope(ShardMapScope const&) = delete;
  ShardMapScope& operator=(ShardMapScope const&) = delete;
};

}  // namespace tessel::detail
