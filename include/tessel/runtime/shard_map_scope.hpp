#pragma once
// What explain records of shard_map bodies and the evaluations inside a jitted function. The
// body's scope itself (its mesh) is the expression layer's: expr/manual_scope.hpp.
#include <string>
#include <vector>

#include "tessel/expr/manual_scope.hpp"

namespace tessel::detail {

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
