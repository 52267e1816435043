#pragma once
// Scans (cumsum): the result is sharded like the operand, which is made into a tensor first.
// Each device scans its block; a sharded axis adds a carry step down the axis (an exclusive scan
// of the blocks' totals, MPI_Exscan's pattern), never a gather of the whole tensor.
#include <format>

#include "tessel/plan/detail/planner.hpp"

namespace tessel::plan {

class CumsumRules final : public OpRules {
 public:
  // One add per element read.
  constexpr StepWork work(GraphNode const&, Step const&, StepBlocks const& b) const override {
    return counting::per_element_read(b);
  }
  constexpr std::optional<NamedSharding> natural(Planner const& p, int i) const override {
    return p.natural_of(p.node(i).children[0]);
  }
  // The operand is made with the sharding the result should have.
  constexpr void assign(Planner& p, int i, std::optional<NamedSharding> const& req) const override {
    NamedSharding out = req ? *req : p.natural_of(i);
    p.assign(p.node(i).children[0], out);
    p.plan(i).out = out;
    p.plan(i).after_collective = out;
  }
  constexpr void region(Scheduler& s, int i, Region& r) const override { s.boundary(i, r); }
  constexpr void materialize(Scheduler& s, int i) const override {
    GraphNode const& n = s.node(i);
    int c = n.children[0];
    s.operand(c);
    NamedSharding const& out = *s.at(i).out;
    Mesh const& mesh = out.mesh();
    s.add(StepKind::kernel, i, mesh.num_devices(), {"cumsum", s.user_op(i)}, {s.slot(c)});
    auto axes = effective_axes(mesh.axes(), out.layout().dim_axes(n.axis));
    if (axes.empty()) return;
    int group = group_size(mesh.axes(), axes);
    // Each block reads one slice (the last along the axis) of the block before it; priced as the
    // collective-permute it amounts to, once per block down the axis.
    Shape slice = out.block_shape(n.shape);
    slice[n.axis] = 1;
    double bytes = static_cast<double>(slice.num_elements() * static_cast<std::int64_t>(n.dtype_bytes));
    double us = (group - 1) * s.model.collective_permute_us(bytes);
    Step& carry = s.add(StepKind::exchange, i, mesh.num_devices(),
                        {"cumsum_carry", s.user_op(i), s.groups_label(mesh, axes)}, {i});
    carry.bytes = bytes;
    carry.estimate_us = us;
    carry.combine = n.combine;
    carry.to = out;
    for (auto a : axes) carry.axes.push_back(a);
    carry.group = group;
  }
  // Each block's scan, then the carry down a split axis.
  std::string explain(Plan const& plan, Step const& step) const override {
    GraphNode const& n = node_of(plan, step);
    NamedSharding const& out = *plan_of(plan, step.node).out;
    if (step.kind == StepKind::kernel)
      return std::format("kernel    {} along axis {} -> {} {} on {} devices: each device scans its block", n.op, n.axis,
                         type_text(n), to_string(out.spec()), out.mesh().num_devices());
    return std::format("cumsum_carry {} over mesh axes {} (groups of {}): each block adds the last values of the block "
                       "before it along axis {}: {:.0f} bytes per device, est {:.1f} us (from {})",
                       name(n.combine), axes_text(out.mesh(), step.axes), step.group, n.axis, step.bytes,
                       step.estimate_us, n.op);
  }
};


inline constexpr CumsumRules cumsum_rules{};

}  // namespace tessel::plan
