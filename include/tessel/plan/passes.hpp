#pragma once
// Text pieces of the planner's passes (plan/detail/: propagation, common values, the instruction
// list), shared with explain (src/plan/explain.cpp). Only plans made at run time have text.
#include <string>
#include <vector>

#include "tessel/plan/plan.hpp"

namespace tessel::plan {

// Text pieces explain and the schedule share: "float32[64,32]", "('x', 'y')".
std::string type_text(GraphNode const& n);
std::string axes_text(Mesh const& mesh, ShardLayout::AxisList const& axes);
// "x,y" (a Kokkos Tools label's form).
std::string axes_label(Mesh const& mesh, ShardLayout::AxisList const& axes);

}  // namespace tessel::plan
