#pragma once
// Which shard_map's body is running on this thread: explicit collectives (expr/manual_collective.hpp)
// resolve their axis names against its mesh, and lax::axis_index numbers devices on it.
#include <string>
#include <vector>

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

// While a ShardMapExplainer lives, every plan evaluated on this thread is recorded (as explain's
// text), and every shard_map call records its mesh and specs: what ShardMapped::explain prints,
// and what jit's explain prints of the shard_maps (and other evaluations) inside a function.
struct ShardMapRecorder {
  std::vector<std::string> entries;
};
extern thread_local ShardMapRecorder* shard_map_recorder;
void record_plan_text(std::string text);

class ShardMapExplainer {
 public:
  ShardMapExplainer();
  ~ShardMapExplainer();
  ShardMapExplainer(ShardMapExplainer const&) = delete;
  ShardMapExplainer& operator=(ShardMapExplainer const&) = delete;
  // The recorded entries, each under a "-- " line saying what it is.
  [[nodiscard]] std::string text() const;
  [[nodiscard]] bool empty() const { return recorder_.entries.empty(); }

 private:
  ShardMapRecorder recorder_;
  ShardMapRecorder* previous_;
};

}  // namespace tessel::detail
