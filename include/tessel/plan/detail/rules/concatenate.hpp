#pragma once
// concatenate: every operand takes one common sharding with the concatenated dimension unsharded
// (operands sharded along it are gathered first), and each device copies its blocks side by side.
#include <format>

#include "tessel/plan/detail/planner.hpp"
#include "tessel/plan/view_rules.hpp"

namespace tessel::plan {

class ConcatenateRules final : public OpRules {
 public:
  constexpr StepWork work(GraphNode const&, Step const&, StepBlocks const&) const override {
    return counting::none();
  }
  // An operand's sharding with the concatenated dimension unsharded; the cheapest for all wins.
  constexpr std::optional<NamedSharding> natural(Planner const& p, int i) const override {
    GraphNode const& n = p.node(i);
    return p.cheapest_tiling(i, [&](int, NamedSharding const& s) { return unshard_dimension(s, n.shape.size(), n.axis); });
  }
  constexpr void assign(Planner& p, int i, std::optional<NamedSharding> const& req) const override {
    NamedSharding common = p.natural_of(i);
    for (int c : p.node(i).children) p.assign(c, common);
    p.plan(i).after_collective = common;
    Planner::settle(p.plan(i), common, req);
  }
  constexpr void region(Scheduler& s, int i, Region& r) const override { s.boundary(i, r); }
  constexpr void materialize(Scheduler& s, int i) const override {
    GraphNode const& n = s.node(i);
    std::vector<int> parts;
    for (int c : n.children) {
      s.operand(c);
      parts.push_back(s.slot(c));
    }
    auto const& own = *s.at(i).after_collective;
    s.add(StepKind::kernel, i, own.mesh().num_devices(), {"concatenate", s.user_op(i)}, std::move(parts));
    s.result_reshard(i);
  }
  std::string explain(Plan const& plan, Step const& step) const override {
    GraphNode const& n = node_of(plan, step);
    auto const& own = *plan_of(plan, step.node).after_collective;
    return std::format("kernel    concatenate along axis {} -> {} {} on {} devices: {} operands copied side by side",
                       n.axis, type_text(n), to_string(own.spec()), own.mesh().num_devices(), n.children.size());
  }
};


inline constexpr ConcatenateRules concatenate_rules{};

}  // namespace tessel::plan
