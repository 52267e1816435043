#pragma once
// argmax / argmin: per-device results keep the input's tiling of the kept dimensions, like a
// reduction's; over a split axis each device's best (value, index) is completed by an all-reduce of
// the values and then an all-reduce (min) of the indices of the devices holding the winner.
#include <format>

#include "tessel/plan/detail/planner.hpp"

namespace tessel::plan {

class ArgReduceRules final : public OpRules {
 public:
  // One comparison per element read.
  constexpr StepWork work(GraphNode const&, Step const&, StepBlocks const& b) const override {
    return counting::per_element_read(b);
  }
  constexpr std::optional<NamedSharding> natural(Planner const& p, int i) const override {
    return p.reduced_tiling(i, p.natural_of(p.node(i).children[0])).first;
  }
  constexpr void assign(Planner& p, int i, std::optional<NamedSharding> const& req) const override {
    int c = p.node(i).children[0];
    p.assign(c, p.natural[static_cast<std::size_t>(c)]);
    auto [partial, axes] = p.reduced_tiling(i, *p.plan(c).out);
    NodePlan& plan = p.plan(i);
    plan.partial = partial;
    plan.collective_axes = axes;
    if (!axes.empty()) plan.collective = Collective::all_reduce;
    plan.after_collective = partial;
    Planner::settle(plan, partial, req);
  }
  constexpr void region(Scheduler& s, int i, Region& r) const override { s.boundary(i, r); }
  constexpr void materialize(Scheduler& s, int i) const override {
    GraphNode const& n = s.node(i);
    int c = n.children[0];
    s.operand(c);
    NodePlan const& p = s.at(i);
    auto const& partial = *p.partial;
    Mesh const& mesh = partial.mesh();
    s.add(StepKind::kernel, i, mesh.num_devices(), {"arg_reduce", s.user_op(i)}, {s.slot(c)});
    if (p.collective) {
      int group = group_size(mesh.axes(), p.collective_axes);
      auto count = static_cast<double>(partial.block_shape(n.shape).num_elements());
      double bytes = count * static_cast<double>(s.node(c).dtype_bytes + 4);
      double us = s.model.all_reduce_us(count * static_cast<double>(s.node(c).dtype_bytes), group) +
                  s.model.all_reduce_us(count * 4, group);
      Step& st = s.add(Collective::all_reduce, i, mesh.num_devices(),
                       {"all_reduce", s.user_op(i), s.groups_label(mesh, p.collective_axes)}, {i});
      st.group = group;
      st.bytes = bytes;
      st.estimate_us = us;
      st.to = partial;
      st.axes = p.collective_axes;
      st.combine = n.combine;
      st.by_op = true;  // the op's kernel all-reduces the values, then the indices of the winners
    }
    s.result_reshard(i);
  }
  // Each device's best, then the all-reduce of the values and of the indices.
  std::string explain(Plan const& plan, Step const& step) const override {
    GraphNode const& n = node_of(plan, step);
    auto const& partial = *plan_of(plan, step.node).partial;
    if (step.kind == StepKind::kernel)
      return std::format("kernel    {} -> {} {} on {} devices: each device's first best (value, index)", n.op,
                         type_text(n), to_string(partial.spec()), partial.mesh().num_devices());
    return std::format("all-reduce {} over mesh axes {} (groups of {}): the values, then the first index of the best: "
                       "{:.0f} bytes per device, est {:.1f} us",
                       n.op, axes_text(partial.mesh(), step.axes), step.group, step.bytes, step.estimate_us);
  }
};


inline constexpr ArgReduceRules arg_reduce_rules{};

}  // namespace tessel::plan
