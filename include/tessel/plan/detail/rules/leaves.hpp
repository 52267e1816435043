#pragma once
// Leaves: a tensor has the sharding it was put with (resharded when a consumer wants another);
// a C++ scalar has none and takes any.
#include "tessel/plan/detail/planner.hpp"

namespace tessel::plan {

class TensorRules final : public OpRules {
 public:
  constexpr StepWork work(GraphNode const&, Step const& step, StepBlocks const& b) const override {
    return counting::per_op_element(step.ops.size(), b);
  }
  constexpr std::optional<NamedSharding> natural(Planner const& p, int i) const override { return p.node(i).sharding; }
  constexpr void assign(Planner& p, int i, std::optional<NamedSharding> const& req) const override {
    Planner::settle(p.plan(i), *p.node(i).sharding, req);
  }
  constexpr void region(Scheduler& s, int i, Region& r) const override {
    NodePlan const& p = s.at(i);
    if (p.reshard && p.same_as < 0) s.reshard_steps(i, s.slot(i), *s.node(i).sharding, *p.out, "operand");
    r.reads.push_back(s.slot(i));
  }
  constexpr void materialize(Scheduler& s, int i) const override {
    Region ignored;
    region(s, i, ignored);
  }
  // Its steps are sharding changes (the planner explains them).
  std::string explain(Plan const&, Step const&) const override { return {}; }
};

class ScalarRules final : public OpRules {
 public:
  constexpr StepWork work(GraphNode const&, Step const& step, StepBlocks const& b) const override {
    return counting::per_op_element(step.ops.size(), b);
  }
  constexpr std::optional<NamedSharding> natural(Planner const&, int) const override { return std::nullopt; }
  constexpr void assign(Planner&, int, std::optional<NamedSharding> const&) const override {}
  constexpr void region(Scheduler&, int, Region&) const override {}  // bound into the kernel by value
  constexpr void materialize(Scheduler&, int) const override {}
  std::string explain(Plan const&, Step const&) const override { return {}; }  // (it has no steps)
};


inline constexpr TensorRules tensor_rules{};
inline constexpr ScalarRules scalar_rules{};

}  // namespace tessel::plan
