#pragma once
// Views (transpose, reshape, slice): GSPMD's rules for each (plan/view_rules.hpp). Inside a region
// a view is a leaf that reads its operand's shards with other strides; made apart, a reshape that
// keeps every block is zero-copy and a transpose or slice is a copy kernel.
#include <format>

#include "tessel/plan/detail/planner.hpp"
#include "tessel/plan/view_rules.hpp"

namespace tessel::plan {

// A view's operand and result shardings, from the operand's natural sharding.
constexpr ViewShardings view_of(Planner const& p, int i) {
  GraphNode const& n = p.node(i);
  return view_shardings(n.view, p.node(n.children[0]).shape, n.shape, p.natural_of(n.children[0]));
}

class ViewRules final : public OpRules {
 public:
  constexpr StepWork work(GraphNode const&, Step const&, StepBlocks const&) const override {
    return counting::none();
  }
  constexpr std::optional<NamedSharding> natural(Planner const& p, int i) const override { return view_of(p, i).output; }
  constexpr void assign(Planner& p, int i, std::optional<NamedSharding> const& req) const override {
    ViewShardings v = view_of(p, i);
    p.assign(p.node(i).children[0], v.input);
    p.plan(i).after_collective = v.output;  // the view's own sharding, before any reshard
    Planner::settle(p.plan(i), v.output, req);
  }
  constexpr void region(Scheduler& s, int i, Region& r) const override {
    if (s.at(i).reshard) return s.boundary(i, r);
    int c = s.node(i).children[0];
    s.operand(c);
    r.reads.push_back(s.slot(c));
    r.ops.push_back(s.node(i).op + std::string("(view)"));
  }
  constexpr void materialize(Scheduler& s, int i) const override {
    GraphNode const& n = s.node(i);
    int c = n.children[0];
    s.operand(c);
    auto const& own = *s.at(i).after_collective;
    if (n.view.kind == ViewKind::reshape) {
      s.add(StepKind::view, i, own.mesh().num_devices(), {"view", s.user_op(i)}, {s.slot(c)});
    } else {
      Region v;
      v.ops.push_back(n.op + std::string("(view)"));
      v.reads.push_back(s.slot(c));
      s.kernel_step(i, v, "view_copy");
    }
    s.result_reshard(i);
  }
  // A reshape's view, or the copy kernel of a transpose or slice.
  std::string explain(Plan const& plan, Step const& step) const override {
    GraphNode const& n = node_of(plan, step);
    if (step.kind != StepKind::view) return region_kernel_text(plan, step, n.op);
    int c = n.children[0];
    return std::format("view      reshape {} {} -> {} {}: zero-copy, each device's block is reinterpreted",
                       type_text(plan.graph[static_cast<std::size_t>(c)]), to_string(plan_of(plan, c).out->spec()),
                       type_text(n), to_string(plan_of(plan, step.node).after_collective->spec()));
  }
};


inline constexpr ViewRules view_rules{};

}  // namespace tessel::plan
