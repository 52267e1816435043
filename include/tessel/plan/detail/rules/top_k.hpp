#pragma once
// top_k (expr/top_k.hpp): the result keeps the operand's tiling of every other dimension and has
// the selected axis whole on every device (its order is the ranking, not the operand's). Over a
// split axis each device selects the k best of its block; the op's own all-gather step brings the
// group's candidates (k per device, or the block's length if smaller) to every device, which
// selects the k best among them. The axis itself never crosses devices.
#include <format>

#include "tessel/plan/detail/planner.hpp"
#include "tessel/plan/view_rules.hpp"

namespace tessel::plan {

// `operand` with dimension `axis` unsharded.
constexpr NamedSharding axis_whole(NamedSharding const& operand, std::size_t rank, std::size_t axis) {
  DimAxes dims = dims_of(operand, rank);
  dims[axis].clear();
  return sharding_from_axes(operand.mesh(), dims);
}

class TopKRules final : public OpRules {
 public:
  // One comparison per element read (the heap's log k is not counted, as XLA counts a sort).
  constexpr StepWork work(GraphNode const&, Step const&, StepBlocks const& b) const override {
    return counting::per_element_read(b);
  }
  constexpr std::optional<NamedSharding> natural(Planner const& p, int i) const override {
    GraphNode const& n = p.node(i);
    return axis_whole(p.natural_of(n.children[0]), n.shape.size(), n.axis);
  }
  // The operand keeps its own tiling (selecting inside each block is what spares the gather).
  constexpr void assign(Planner& p, int i, std::optional<NamedSharding> const& req) const override {
    GraphNode const& n = p.node(i);
    int c = n.children[0];
    p.assign(c, p.natural[static_cast<std::size_t>(c)]);
    NamedSharding const& operand = *p.plan(c).out;
    NamedSharding own = axis_whole(operand, n.shape.size(), n.axis);
    NodePlan& plan = p.plan(i);
    plan.collective_axes = effective_axes(operand.mesh().axes(), operand.layout().dim_axes(n.axis));
    if (!plan.collective_axes.empty()) plan.collective = Collective::all_gather;
    plan.partial = operand;
    plan.after_collective = own;
    Planner::settle(plan, own, req);
  }
  constexpr void region(Scheduler& s, int i, Region& r) const override { s.boundary(i, r); }
  constexpr void materialize(Scheduler& s, int i) const override {
    GraphNode const& n = s.node(i);
    int c = n.children[0];
    s.operand(c);
    NodePlan const& p = s.at(i);
    Mesh const& mesh = p.partial->mesh();
    s.add(StepKind::kernel, i, mesh.num_devices(), {n.op, s.user_op(i)}, {s.slot(c)});
    if (p.collective) {
      int group = group_size(mesh.axes(), p.collective_axes);
      // Every device's candidates: k values and their int32 indices per row.
      auto rows = static_cast<double>(p.after_collective->block_shape(n.shape).num_elements());
      double bytes = rows * group * static_cast<double>(s.node(c).dtype_bytes + 4);
      double us = s.model.all_gather_us(bytes, group);
      Step& st = s.add(Collective::all_gather, i, mesh.num_devices(),
                       {"all_gather", s.user_op(i), s.groups_label(mesh, p.collective_axes)}, {i});
      st.group = group;
      st.bytes = bytes;
      st.estimate_us = us;
      st.to = *p.after_collective;
      st.axes = p.collective_axes;
      st.by_op = true;  // the op's kernel gathers the candidates and selects among them
    }
    s.result_reshard(i);
  }
  // Each block's k best, then the all-gather of the candidates.
  std::string explain(Plan const& plan, Step const& step) const override {
    GraphNode const& n = node_of(plan, step);
    auto const& partial = *plan_of(plan, step.node).partial;
    if (step.kind == StepKind::kernel)
      return std::format("kernel    {} {} -> {} {} on {} devices: each device's {} best along axis {} of its block", n.op,
                         type_text(plan.graph[static_cast<std::size_t>(n.children[0])]), type_text(n),
                         to_string(partial.spec()), partial.mesh().num_devices(), n.shape[n.axis], n.axis);
    return std::format("all-gather {} candidates over mesh axes {} (groups of {}), then each device's {} best of them: "
                       "{:.0f} bytes per device, est {:.1f} us",
                       n.op, axes_text(partial.mesh(), step.axes), step.group, n.shape[n.axis], step.bytes,
                       step.estimate_us);
  }
};

inline constexpr TopKRules top_k_rules{};

}  // namespace tessel::plan
