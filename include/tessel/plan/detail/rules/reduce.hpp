#pragma once
// Reductions (sum, mean, max, min, prod): per-device results keep the input's tiling of the kept
// dimensions; mesh axes that split reduced dimensions are left partial, for an all-reduce or a
// reduce-scatter. Over the last axis with keepdims, a reduction fuses into its consumer's rows.
#include <format>

#include "tessel/plan/detail/planner.hpp"

namespace tessel::plan {

class ReduceRules final : public OpRules {
 public:
  constexpr StepWork work(GraphNode const&, Step const& step, StepBlocks const& b) const override {
    return counting::per_op_element(step.ops.size(), b);
  }
  constexpr std::optional<NamedSharding> natural(Planner const& p, int i) const override {
    return p.reduced_tiling(i, p.natural_of(p.node(i).children[0])).first;
  }
  constexpr void assign(Planner& p, int i, std::optional<NamedSharding> const& req) const override {
    GraphNode const& n = p.node(i);
    int c = n.children[0];
    auto input = p.natural[static_cast<std::size_t>(c)];
    if (input && req) input = p.refine_kept(i, *input, *req);
    p.assign(c, input);
    auto [partial, axes] = p.reduced_tiling(i, *p.plan(c).out);
    Planner::complete_partial(p.plan(i), partial, axes, req, n.shape.size());
  }
  constexpr void region(Scheduler& s, int i, Region& r) const override {
    if (!s.at(i).row_fused) return s.boundary(i, r);
    s.region(s.node(i).children[0], r);
    r.ops.push_back(s.node(i).op + std::string("(row)"));
  }
  constexpr void materialize(Scheduler& s, int i) const override {
    GraphNode const& n = s.node(i);
    Region r;
    s.region(n.children[0], r);
    r.ops.emplace_back(n.op);
    s.kernel_step(i, r, "reduce");
    s.collective_steps(i);
    s.result_reshard(i);
  }
  // Its kernel, then the collective completing it.
  std::string explain(Plan const& plan, Step const& step) const override {
    GraphNode const& n = node_of(plan, step);
    std::string what = std::format("{} over axes (", n.op);
    for (std::size_t k = 0; k < n.axes.size(); ++k) what += std::format("{}{}", k ? ", " : "", n.axes[k]);
    what += ")";
    return step.kind == StepKind::kernel ? region_kernel_text(plan, step, "reduce " + what) : reduction_text(plan, step, what);
  }
};


inline constexpr ReduceRules reduce_rules{};

}  // namespace tessel::plan
