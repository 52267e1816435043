#pragma once
// The planner's passes after sharding propagation (src/plan/propagate.cpp), each in a file of its
// own: common values (cse.cpp), the instruction list (schedule.cpp), and the text of explain
// (explain.cpp).
#include <string>
#include <vector>

#include "tessel/plan/plan.hpp"

namespace tessel::plan {

// XLA's CSE on the planned graph: sets NodePlan::same_as where a node computes what an earlier one
// computes, the same way.
void share_common_values(Graph const& g, std::vector<NodePlan>& plans);
// The value class of each node: the first node (by index) computing the same value (same op,
// shapes and attributes, the same tensors by GraphNode::alias, equal scalars, operands of the same
// classes), whatever their plans. CSE shares within a class; the planner reuses across shardings.
std::vector<int> value_classes(Graph const& g);

// Each node's value slot (Plan::slot) from its plan: its own, or the one it shares.
void assign_slots(Plan& plan);

// Orders the planned graph into instructions (Plan::steps) and value slots (Plan::slot).
void schedule(Plan& plan, CostModel const& model);

// Text pieces explain and the schedule share: "float32[64,32]", "('x', 'y')".
std::string type_text(GraphNode const& n);
std::string axes_text(Mesh const& mesh, ShardLayout::AxisList const& axes);
// "x,y" (a Kokkos Tools label's form).
std::string axes_label(Mesh const& mesh, ShardLayout::AxisList const& axes);

}  // namespace tessel::plan
