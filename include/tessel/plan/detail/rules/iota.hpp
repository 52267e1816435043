#pragma once
// iota: no operands and no memory. It takes the sharding its consumer asks for (each device
// computes its block's coordinates inside the consumer's kernel); alone, it is one kernel on
// device 0, like an uncommitted array.
#include "tessel/plan/detail/planner.hpp"

namespace tessel::plan {

class IotaRules final : public OpRules {
 public:
  constexpr StepWork work(GraphNode const&, Step const& step, StepBlocks const& b) const override {
    return counting::per_op_element(step.ops.size(), b);
  }
  constexpr std::optional<NamedSharding> natural(Planner const&, int) const override { return std::nullopt; }
  constexpr void assign(Planner& p, int i, std::optional<NamedSharding> const& req) const override {
    p.plan(i).out = req ? *req : Planner::unplaced();
  }
  constexpr void region(Scheduler& s, int i, Region& r) const override { r.ops.emplace_back(s.node(i).op); }
  constexpr void materialize(Scheduler& s, int i) const override { s.fused_kernel(i); }
  std::string explain(Plan const& plan, Step const& step) const override { return region_kernel_text(plan, step, "iota"); }
};


inline constexpr IotaRules iota_rules{};

}  // namespace tessel::plan
