#pragma once
// dynamic_slice and dynamic_update_slice (expr/dynamic_slice.hpp): the box's start is known only at
// run time, so a dimension the box cuts cannot be split among devices when the box is read out
// (any device's block may hold it): dynamic_slice unshards those dimensions and keeps the others'
// tiling. dynamic_update_slice keeps its operand's tiling on every dimension: each device writes
// the part of the box its block holds, reading an update that is whole along the cut dimensions
// and tiled like the operand along the others. The start indices are replicated scalars.
#include <format>

#include "tessel/plan/detail/planner.hpp"
#include "tessel/plan/view_rules.hpp"

namespace tessel::plan {

// The operand's natural tiling with the dimensions a box of `box`'s sizes cuts unsharded.
constexpr NamedSharding uncut_tiling(NamedSharding const& operand, Shape const& shape, Shape const& box) {
  DimAxes dims = dims_of(operand, shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (box[d] != shape[d]) dims[d].clear();
  return sharding_from_axes(operand.mesh(), dims);
}

// The start indices (every child after the first `boxes`) replicated over the result's mesh.
constexpr void assign_starts(Planner& p, int i, std::size_t boxes, Mesh const& mesh) {
  auto const& children = p.node(i).children;
  for (std::size_t k = boxes; k < children.size(); ++k) p.assign(children[k], sharding_from_axes(mesh, DimAxes{}));
}

// The kernel step's operands: the value slots of every child a step computes or holds (scalar
// start indices are bound by value, from the run's scalars).
constexpr std::vector<int> box_operands(Scheduler& s, int i) {
  std::vector<int> slots;
  for (int c : s.node(i).children) {
    if (s.node(c).kind == NodeKind::scalar) continue;
    s.operand(c);
    slots.push_back(s.slot(c));
  }
  return slots;
}

// Update: dynamic_update_slice (children: operand, update, starts), else dynamic_slice (operand,
// starts). The result keeps its own tiling; one kernel step makes it.
template <bool Update>
class DynamicBoxRules final : public OpRules {
 public:
  // An update writes the box in place when its operand is donated, which the cost analysis takes
  // as the case to count (a run that copies instead shows in a trace as the whole operand); a
  // slice reads the box alone.
  constexpr StepWork work(GraphNode const&, Step const&, StepBlocks const& b) const override {
    StepWork w = counting::none();
    if (Update && b.reads.size() >= 2) w.updates_in_place = b.reads[1].num_elements();
    if (!Update && b.made) w.reads_of_first = b.made->num_elements();
    return w;
  }
  static constexpr std::size_t boxes = Update ? 2 : 1;  // children before the start indices

  constexpr std::optional<NamedSharding> natural(Planner const& p, int i) const override {
    int x = p.node(i).children[0];
    if constexpr (Update) return p.natural_of(x);
    else return uncut_tiling(p.natural_of(x), p.node(x).shape, p.node(i).shape);
  }
  constexpr void assign(Planner& p, int i, std::optional<NamedSharding> const& req) const override {
    GraphNode const& n = p.node(i);
    NamedSharding own = *natural(p, i);
    p.assign(n.children[0], own);
    if constexpr (Update) p.assign(n.children[1], uncut_tiling(own, n.shape, p.node(n.children[1]).shape));
    assign_starts(p, i, boxes, own.mesh());
    p.plan(i).after_collective = own;
    Planner::settle(p.plan(i), own, req);
  }
  constexpr void region(Scheduler& s, int i, Region& r) const override { s.boundary(i, r); }
  constexpr void materialize(Scheduler& s, int i) const override {
    GraphNode const& n = s.node(i);
    auto const& own = *s.at(i).after_collective;
    s.add(StepKind::kernel, i, own.mesh().num_devices(), {n.op, s.user_op(i)}, box_operands(s, i));
    s.result_reshard(i);
  }
  std::string explain(Plan const& plan, Step const& step) const override {
    GraphNode const& n = node_of(plan, step);
    auto const& own = *plan_of(plan, step.node).after_collective;
    return std::format("kernel    {} {} -> {} {} on {} devices: {}", n.op,
                       type_text(plan.graph[static_cast<std::size_t>(n.children[boxes - 1])]), type_text(n),
                       to_string(own.spec()), own.mesh().num_devices(),
                       Update ? "each device writes the part of the update its block holds"
                              : "each device copies the box at the run-time start from its block");
  }
};

inline constexpr DynamicBoxRules<false> dynamic_slice_rules{};
inline constexpr DynamicBoxRules<true> dynamic_update_slice_rules{};

}  // namespace tessel::plan
