#pragma once
// Explicit collectives inside shard_map (expr/manual_collective.hpp): the operand is a per-device
// value (replicated on the mesh, its replicas differing), and so is the result. Each runs as one
// collective step over the groups of its named axes, exactly as written: nothing is chosen here.
#include <algorithm>
#include <format>

#include "tessel/core/error.hpp"
#include "tessel/plan/detail/planner.hpp"

namespace tessel::plan {

constexpr Collective collective_of(ManualKind kind) {
  switch (kind) {
    case ManualKind::psum:
    case ManualKind::pmax:
    case ManualKind::pmin: return Collective::all_reduce;
    case ManualKind::all_gather: return Collective::all_gather;
    case ManualKind::psum_scatter: return Collective::reduce_scatter;
    case ManualKind::all_to_all: return Collective::all_to_all;
    case ManualKind::ppermute: return Collective::collective_permute;
  }
  return Collective::all_reduce;
}

constexpr ReduceOp combine_of(ManualKind kind) {
  return kind == ManualKind::pmax ? ReduceOp::max : kind == ManualKind::pmin ? ReduceOp::min : ReduceOp::sum;
}

class ManualCollectiveRules final : public OpRules {
 public:
  constexpr StepWork work(GraphNode const&, Step const&, StepBlocks const&) const override {
    return counting::none();
  }
  constexpr std::optional<NamedSharding> natural(Planner const& p, int i) const override {
    return p.natural_of(p.node(i).children[0]);
  }
  constexpr void assign(Planner& p, int i, std::optional<NamedSharding> const& req) const override {
    GraphNode const& n = p.node(i);
    int c = n.children[0];
    NamedSharding own = p.natural_of(c);
    // The operand must be per-device blocks on the shard_map's mesh: replicated there, on a mesh
    // with the named axes (a constant lives on one device and names none).
    auto const& m = n.manual.mesh_axes;
    bool const fits = own.layout().fully_replicated() &&
                      std::all_of(m.begin(), m.end(), [&](auto a) { return a < own.mesh().num_axes(); }) &&
                      group_size(own.mesh().axes(), m) == n.manual.group;
    if (!fits)
      throw Error(std::format("lax::{}: its operand {} is {} on {}, not a per-device value on the shard_map's mesh; "
                              "collectives inside shard_map take values computed from its arguments",
                              n.op, type_text(p.node(c)), to_string(own.spec()), to_string(own.mesh())));
    p.assign(c, own);
    NodePlan& plan = p.plan(i);
    plan.after_collective = own;
    Planner::settle(plan, own, req);
  }
  constexpr void region(Scheduler& s, int i, Region& r) const override { s.boundary(i, r); }
  constexpr void materialize(Scheduler& s, int i) const override {
    GraphNode const& n = s.node(i);
    int c = n.children[0];
    s.operand(c);
    NamedSharding const& own = *s.at(i).after_collective;
    Mesh const& mesh = own.mesh();
    ManualCollectiveSpec const& m = n.manual;
    Collective kind = collective_of(m.kind);
    double in_bytes = static_cast<double>(s.node(c).shape.num_elements()) * static_cast<double>(n.dtype_bytes);
    double out_bytes = static_cast<double>(n.shape.num_elements()) * static_cast<double>(n.dtype_bytes);
    double us = 0;
    switch (kind) {
      case Collective::all_reduce: us = s.model.all_reduce_us(in_bytes, m.group); break;
      case Collective::reduce_scatter: us = s.model.reduce_scatter_us(in_bytes, m.group); break;
      case Collective::all_gather: us = s.model.all_gather_us(out_bytes, m.group); break;
      case Collective::all_to_all: us = s.model.all_to_all_us(in_bytes, m.group); break;
      case Collective::collective_permute: us = m.group > 1 ? s.model.collective_permute_us(in_bytes) : 0; break;
    }
    double bytes = kind == Collective::all_gather ? out_bytes : in_bytes;
    Step& st = s.add(kind, i, mesh.num_devices(), {n.op, s.user_op(i), s.groups_label(mesh, m.mesh_axes)}, {s.slot(c)});
    st.group = m.group;
    st.bytes = bytes;
    st.estimate_us = us;
    st.to = own;
    st.axes = m.mesh_axes;
    st.combine = combine_of(m.kind);
    st.by_op = true;  // written in shard_map: its kernel moves the blocks
    s.result_reshard(i);
  }
  std::string explain(Plan const& plan, Step const& step) const override {
    GraphNode const& n = node_of(plan, step);
    return std::format("{:<9} over mesh axes {} (groups of {}), written in shard_map: {} -> {}: {:.0f} bytes per device, "
                       "est {:.1f} us",
                       n.op, axes_text(plan_of(plan, step.node).after_collective->mesh(), step.axes), step.group,
                       type_text(plan.graph[static_cast<std::size_t>(n.children[0])]), type_text(n), step.bytes,
                       step.estimate_us);
  }
};


inline constexpr ManualCollectiveRules manual_collective_rules{};

}  // namespace tessel::plan
