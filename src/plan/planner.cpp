// The planner compiled once for the plans made at run time (plan/detail/make_plan.hpp holds it,
// constexpr, so static_jit runs the same code in the compiler), and what the tools ask each op's
// rules about a planned step: its work and its line of explain.
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

std::string step_text(Plan const& plan, Step const& step) {
  if (step.from) return reshard_text(plan, step);
  GraphNode const& n = node_of(plan, step);
  std::string text = rules_for(n.kind).explain(plan, step);
  if (text.empty())
    throw Error(std::format("tessel: internal error: the rules of {} (node {}) explain nothing for its {} step", n.op,
                            step.node, step.name));
  return text;
}

}  // namespace tessel::plan
