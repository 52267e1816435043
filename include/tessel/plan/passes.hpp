#pragma once
// Text pieces of the planner's passes (plan/detail/: propagation, common values, the instruction
// list), shared with explain (src/plan/explain.cpp).
#include <string>
#include <string_view>
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

// Explain's lines (plan::step_text): a sharding change's step (the planner's), and those several
// families of ops share (their OpRules::explain): the kernel of a fused region making `what`
// ("elementwise", "reduce sum over axes (1)"), and the all-reduce or reduce-scatter that completes
// partial results, naming what they come `from`.
std::string reshard_text(Plan const& plan, Step const& step);
std::string region_kernel_text(Plan const& plan, Step const& step, std::string_view what);
std::string reduction_text(Plan const& plan, Step const& step, std::string_view from);

}  // namespace tessel::plan
