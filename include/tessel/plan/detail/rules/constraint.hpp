#pragma once
// with_sharding_constraint: a hard requirement. The operand is computed with the required sharding,
// and the constraint's value is resharded only when a consumer wants another.
#include "tessel/plan/detail/planner.hpp"

namespace tessel::plan {

class ConstraintRules final : public OpRules {
 public:
  constexpr StepWork work(GraphNode const&, Step const& step, StepBlocks const& b) const override {
    return counting::per_op_element(step.ops.size(), b);
  }
  constexpr std::optional<NamedSharding> natural(Planner const& p, int i) const override { return p.node(i).sharding; }
  constexpr void assign(Planner& p, int i, std::optional<NamedSharding> const& req) const override {
    GraphNode const& n = p.node(i);
    p.assign(n.children[0], n.sharding);
    Planner::settle(p.plan(i), *n.sharding, req);
  }
  constexpr void region(Scheduler& s, int i, Region& r) const override { s.boundary(i, r); }
  constexpr void materialize(Scheduler& s, int i) const override {
    GraphNode const& n = s.node(i);
    s.materialize(n.children[0]);
    if (s.at(i).reshard) s.reshard_steps(i, s.slot(n.children[0]), *n.sharding, *s.at(i).out, "constraint");
  }
  // Its steps are sharding changes (the planner explains them).
  std::string explain(Plan const&, Step const&) const override { return {}; }
};


inline constexpr ConstraintRules constraint_rules{};

}  // namespace tessel::plan
