// The planner compiled once for the plans made at run time (plan/detail/make_plan.hpp holds it,
// constexpr, so static_jit runs the same code in the compiler).
#include "tessel/plan/detail/make_plan.hpp"

namespace tessel::plan {

Plan make_plan(Graph graph, std::optional<NamedSharding> const& requested, CostModel const& model) {
  Plan plan = plan_program(std::move(graph), requested, model);
  plan.last_read = last_reads(plan);
  return plan;
}

}  // namespace tessel::plan

namespace tessel::plan {

StepWork step_work(Plan const& plan, Step const& step, StepBlocks const& blocks) {
  if (step.kind != StepKind::kernel) return {};
  GraphNode const& n = plan.graph[static_cast<std::size_t>(step.node)];
  return rules_for(n.kind).work(n, step, blocks);
}

}  // namespace tessel::plan
