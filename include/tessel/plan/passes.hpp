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
// The shapes of a value's shards: "4x64" when every device's block is whole, else each distinct
// one in mesh order, "3x64 or 1x64" (an uneven split's last devices hold shorter blocks, or none).
std::string block_shapes_text(NamedSharding const& sharding, Shape const& shape);
// "x,y" (a Kokkos Tools label's form).
std::string axes_label(Mesh const& mesh, ShardLayout::AxisList const& axes);

}  // namespace tessel::plan
