#pragma once
// Elementwise ops: operands broadcast into the result and agree on one tiling, the cheapest to
// reach; a chain of them is one fused region, which row-fusable reductions join.
#include "tessel/plan/detail/planner.hpp"

namespace tessel::plan {

class ElementwiseRules final : public OpRules {
 public:
  constexpr StepWork work(GraphNode const&, Step const& step, StepBlocks const& b) const override {
    return counting::per_op_element(step.ops.size(), b);
  }
  // Each operand's tiling seen from the result, and their merge across broadcast dimensions
  // (Planner::merged_tiling); the cheapest for all operands wins, the merge on a tie (it splits
  // the work finest, and it is what GSPMD gives).
  constexpr std::optional<NamedSharding> natural(Planner const& p, int i) const override {
    Shape const& shape = p.node(i).shape;
    auto best = p.cheapest_tiling(i, [&](int c, NamedSharding const& s) { return project(s, p.node(c).shape, shape); });
    if (!best) return best;
    auto merged = p.merged_tiling(i);
    if (merged && !(*merged == *best) && p.operands_cost(i, *merged) <= p.operands_cost(i, *best)) return merged;
    return best;
  }
  constexpr void assign(Planner& p, int i, std::optional<NamedSharding> const& req) const override {
    GraphNode const& n = p.node(i);
    NodePlan& plan = p.plan(i);
    plan.out = req ? *req : p.natural_of(i);
    // The region this node computes: its own, or the one it is a per-row value of.
    auto const& row = p.row_region[static_cast<std::size_t>(i)];
    Shape const& region = row ? row->shape : n.shape;
    NamedSharding const& region_sharding = row ? row->sharding : *plan.out;
    for (int c : n.children) {
      GraphNode const& child = p.node(c);
      if (p.row_fusable(c, region_sharding, region)) {
        NodePlan& cp = p.plan(c);
        cp.row_fused = true;
        cp.out = project(*plan.out, n.shape, child.shape);
        p.assign(child.children[0], region_sharding);
      } else {
        if (p.per_row_value(c, region_sharding, region))
          p.row_region[static_cast<std::size_t>(c)] = Planner::RowRegion{region, region_sharding};
        p.assign(c, project(*plan.out, n.shape, child.shape));
      }
    }
  }
  constexpr void region(Scheduler& s, int i, Region& r) const override {
    for (int c : s.node(i).children) s.region(c, r);
    r.ops.emplace_back(s.node(i).op);
  }
  constexpr void materialize(Scheduler& s, int i) const override { s.fused_kernel(i); }
  std::string explain(Plan const& plan, Step const& step) const override {
    return region_kernel_text(plan, step, "elementwise");
  }
};


inline constexpr ElementwiseRules elementwise_rules{};

}  // namespace tessel::plan
