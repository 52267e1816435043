#pragma once
// take (a gather along one axis of a table): the result's dimensions take the indices' tiling and
// the table's tiling of its other dimensions; a table split along the taken axis leaves partial
// results (each device holds some of the rows) that an all-reduce sums: Megatron's vocab-parallel
// embedding. Mesh axes the indices use are taken off the table (it is resharded), so no axis
// serves two dimensions.
#include <algorithm>
#include <format>

#include "tessel/plan/detail/planner.hpp"

namespace tessel::plan {

struct TakeChoice {
  NamedSharding table, indices, partial;
  AxisList table_axes;  // the mesh axes splitting the taken axis: the all-reduce's
};

constexpr TakeChoice choose_take(Planner const& p, int i) {
  GraphNode const& n = p.node(i);
  GraphNode const& T = p.node(n.children[0]);
  GraphNode const& I = p.node(n.children[1]);
  NamedSharding st = p.natural_of(n.children[0]), si = p.natural_of(n.children[1]);
  Mesh const& mesh = st.mesh().num_devices() >= si.mesh().num_devices() ? st.mesh() : si.mesh();
  auto axes_of = [&](NamedSharding const& s, std::size_t d) { return s.mesh() == mesh ? s.layout().dim_axes(d) : AxisList{}; };
  FixedVector<AxisList, max_rank> tdims, idims, out;
  AxisList used;
  for (std::size_t d = 0; d < I.shape.size(); ++d) {
    idims.push_back(axes_of(si, d));
    for (auto a : idims.back()) used.push_back(a);
  }
  for (std::size_t d = 0; d < T.shape.size(); ++d) {
    AxisList kept;
    for (auto a : axes_of(st, d))
      if (std::find(used.begin(), used.end(), a) == used.end()) kept.push_back(a);
    tdims.push_back(kept);
  }
  for (std::size_t d = 0; d < n.axis; ++d) out.push_back(tdims[d]);
  for (auto const& a : idims) out.push_back(a);
  for (std::size_t d = n.axis + 1u; d < T.shape.size(); ++d) out.push_back(tdims[d]);
  return {sharding_from_axes(mesh, tdims), sharding_from_axes(mesh, idims), sharding_from_axes(mesh, out),
          effective_axes(mesh.axes(), tdims[n.axis])};
}

class TakeRules final : public OpRules {
 public:
  // A gather of rows: data movement, reading of the table the rows it hands on (a device holding
  // part of a split table reads fewer).
  constexpr StepWork work(GraphNode const&, Step const&, StepBlocks const& b) const override {
    StepWork w = counting::none();
    if (b.made) w.reads_of_first = b.made->num_elements();
    return w;
  }
  constexpr std::optional<NamedSharding> natural(Planner const& p, int i) const override { return choose_take(p, i).partial; }
  constexpr void assign(Planner& p, int i, std::optional<NamedSharding> const& req) const override {
    GraphNode const& n = p.node(i);
    TakeChoice c = choose_take(p, i);
    p.assign(n.children[0], c.table);
    p.assign(n.children[1], c.indices);
    Planner::complete_partial(p.plan(i), c.partial, c.table_axes, req, n.shape.size());
  }
  constexpr void region(Scheduler& s, int i, Region& r) const override { s.boundary(i, r); }
  constexpr void materialize(Scheduler& s, int i) const override {
    GraphNode const& n = s.node(i);
    for (int c : n.children) s.operand(c);
    auto const& partial = *s.at(i).partial;
    s.add(StepKind::kernel, i, partial.mesh().num_devices(), {"take", s.user_op(i)},
          {s.slot(n.children[0]), s.slot(n.children[1])});
    s.collective_steps(i);
    // take's kernel runs that all-reduce itself: after it, the fill where an index is outside the
    // table (a fill summed with the other devices' -0.0 would be a NaN whose bits the backend picks).
    if (s.at(i).collective) s.plan.steps.back().by_op = true;
    s.result_reshard(i);
  }
  // The lookup, then the all-reduce of a table split along its axis.
  std::string explain(Plan const& plan, Step const& step) const override {
    if (step.kind != StepKind::kernel) return reduction_text(plan, step, "take from a table split along its axis");
    GraphNode const& n = node_of(plan, step);
    auto const& partial = *plan_of(plan, step.node).partial;
    return std::format(
        "kernel    take along axis {} -> {} {} on {} devices: each device looks up the slices its table block holds",
        n.axis, type_text(n), to_string(partial.spec()), partial.mesh().num_devices());
  }
};


inline constexpr TakeRules take_rules{};

}  // namespace tessel::plan
