#pragma once
// Sharding propagation (GSPMD-style): natural shardings forward from the leaves, then each node's
// plan from the requested output down, each node by its family's rules (plan/detail/rules/). The
// rules follow GSPMD: elementwise operands agree on one tiling (the cheapest to reach, by the cost
// model); a reduction over sharded dimensions leaves partial results that an all-reduce (or, when
// the requested output wants it, a reduce-scatter) completes; a sharding constraint is a hard
// requirement.
#include "tessel/core/compile_pass.hpp"
#include <algorithm>
#include <format>

#include "tessel/core/error.hpp"

#include "tessel/plan/detail/planner.hpp"

namespace tessel::plan {

// The tiling of `s` (for a value of shape `from`) seen from an operand of shape `to` broadcast
// into it (dimensions aligned from the right; broadcast dimensions are not split).
constexpr NamedSharding project(NamedSharding const& s, Shape const& from, Shape const& to) {
  FixedVector<AxisList, max_rank> dims;
  for (std::size_t j = 0; j < to.size(); ++j) {
    std::ptrdiff_t d = static_cast<std::ptrdiff_t>(j) + static_cast<std::ptrdiff_t>(from.size()) -
                       static_cast<std::ptrdiff_t>(to.size());
    if (d < 0 || from[static_cast<std::size_t>(d)] != to[j]) dims.push_back({});
    else dims.push_back(s.layout().dim_axes(static_cast<std::size_t>(d)));
  }
  return sharding_from_axes(s.mesh(), dims);
}

constexpr std::optional<NamedSharding> Planner::merged_tiling(int i) const {
  GraphNode const& n = node(i);
  std::optional<Mesh> mesh;
  for (int c : n.children)
    if (auto const& s = natural[static_cast<std::size_t>(c)]; s && s->mesh().num_devices() > 1 && !mesh) mesh = s->mesh();
  if (!mesh) return std::nullopt;
  FixedVector<AxisList, max_rank> dims(n.shape.size(), AxisList{});
  AxisList used;
  for (std::size_t d = 0; d < n.shape.size(); ++d) {
    for (int c : n.children) {
      auto const& s = natural[static_cast<std::size_t>(c)];
      Shape const& cs = node(c).shape;
      auto j = static_cast<std::ptrdiff_t>(d) + static_cast<std::ptrdiff_t>(cs.size()) -
               static_cast<std::ptrdiff_t>(n.shape.size());
      if (!s || !(s->mesh() == *mesh) || j < 0 || cs[static_cast<std::size_t>(j)] != n.shape[d]) continue;
      AxisList axes = effective_axes(mesh->axes(), s->layout().dim_axes(static_cast<std::size_t>(j)));
      // Compatible sub-tilings refine each other: an operand whose axes extend the dimension's
      // so far adds the rest (up to an axis already used elsewhere); one that disagrees adds none.
      std::size_t k = 0;
      while (k < dims[d].size() && k < axes.size() && dims[d][k] == axes[k]) ++k;
      if (k < dims[d].size()) continue;
      for (; k < axes.size() && std::find(used.begin(), used.end(), axes[k]) == used.end(); ++k) {
        dims[d].push_back(axes[k]);
        used.push_back(axes[k]);
      }
    }
  }
  return sharding_from_axes(*mesh, dims);
}

constexpr NamedSharding Planner::unplaced() { return tessel::detail::device_zero_sharding(); }

constexpr void Planner::forward() {
  // A node's natural sharding follows from its attributes and its operands' alone, so a node of an
  // earlier node's value class (the same value: a tree repeats a shared subexpression at each use)
  // has that node's.
  for (std::size_t i = 0; i < g.size(); ++i) {
    auto const c = value_class.empty() ? i : static_cast<std::size_t>(value_class[i]);
    natural[i] = c < i ? natural[c] : rules_for(g[i].kind).natural(*this, static_cast<int>(i));
  }
}

constexpr bool Planner::reusable(int i) const {
  NodeKind k = node(i).kind;
  if (k == NodeKind::elementwise) return !made_apart.empty() && made_apart[static_cast<std::size_t>(i)];
  return k == NodeKind::dot || k == NodeKind::reduce || k == NodeKind::concatenate || k == NodeKind::constraint;
}

constexpr double Planner::subtree_us(int i) {
  if (!scratch) scratch.emplace().graph = g;
  // The plans are lent to the scratch plan, not copied (a copy of every node's plan per priced
  // subtree made static_jit's compile time grow with the square of the graph): the scheduler
  // only reads them, and moving a vector keeps its elements where they are.
  std::swap(scratch->nodes, plans);
  scratch->steps.clear();
  assign_slots(*scratch);
  Scheduler s{*scratch, model};
  int first = first_of(i);
  s.scheduled.assign(g.size(), 1);
  std::fill(s.scheduled.begin() + first, s.scheduled.begin() + i + 1, 0);
  s.materialize(i);
  std::swap(scratch->nodes, plans);
  double us = 0;
  for (auto const& step : scratch->steps) us += step.estimate_us;
  return us;
}

// GSPMD keeps one sharding per value and reshards it for a user that wants another; a tree of
// expressions names a shared value once per use. So a boundary whose value class an earlier node
// already computes (in the sharding that node's consumer asked for) either takes that value,
// resharded to this request, or computes it again in the requested sharding, whichever the cost
// model prices lower (ties to reusing: it saves the kernels). An earlier value already in the
// requested sharding is taken as it is.
constexpr void Planner::assign(int i, std::optional<NamedSharding> const& requested) {
  OpRules const& rules = rules_for(node(i).kind);
  if (value_class.empty() || !reusable(i)) return rules.assign(*this, i, requested);
  GraphNode const& n = node(i);
  NamedSharding const want = requested ? *requested : natural_of(i);
  int best = -1;
  bool best_own = false;
  double best_us = 0;
  auto consider = [&](std::size_t k, NamedSharding const& have, bool own) {
    double us = have == want ? 0.0 : model.reshard_us(decompose(n.shape, n.dtype_bytes, have, want));
    if (best < 0 || us < best_us || (us == best_us && have == want && !own)) {
      best = static_cast<int>(k);
      best_own = own;
      best_us = us;
    }
  };
  for (std::size_t k = 0; k < g.size(); ++k) {
    NodePlan const& other = plans[k];
    if (static_cast<int>(k) == i || value_class[k] != value_class[static_cast<std::size_t>(i)] || !other.out ||
        other.row_fused || !reusable(static_cast<int>(k)))
      continue;
    consider(k, *other.out, false);
    // Its value before its own result reshard, which it can keep in its slot (NodePlan::keeps_own).
    if (other.reshard && other.after_collective && other.reuses < 0 && g[k].kind != NodeKind::constraint)
      consider(k, *other.after_collective, true);
  }
  if (best < 0) return rules.assign(*this, i, requested);
  auto reuse = [&] {
    NodePlan r;
    NodePlan& from = plan(best);
    r.out = want;
    r.reuses = best;
    r.reuses_own = best_own;
    r.reshard = !(want == (best_own ? *from.after_collective : *from.out));
    from.keeps_own = from.keeps_own || best_own;
    plan(i) = r;
  };
  if (best_us == 0) return reuse();
  // Assigning i touches only its subtree (post-order: the index range [first, i]) and, where a
  // node inside reuses one outside, that node's keeps_own: saved so, not whole.
  auto const first = static_cast<std::size_t>(first_of(i)), end = static_cast<std::size_t>(i) + 1;
  std::vector<NodePlan> saved_plans(plans.begin() + first, plans.begin() + end);
  std::vector<std::optional<RowRegion>> saved_rows(row_region.begin() + first, row_region.begin() + end);
  std::vector<char> saved_keeps(plans.size());
  for (std::size_t k = 0; k < plans.size(); ++k) saved_keeps[k] = plans[k].keeps_own;
  rules.assign(*this, i, requested);
  if (best_us <= subtree_us(i)) {
    // Restored element by element: the rules up the stack hold references into both vectors.
    std::copy(saved_plans.begin(), saved_plans.end(), plans.begin() + first);
    std::copy(saved_rows.begin(), saved_rows.end(), row_region.begin() + first);
    for (std::size_t k = 0; k < plans.size(); ++k) plans[k].keeps_own = saved_keeps[k];
    reuse();
  }
}

constexpr std::pair<NamedSharding, AxisList> Planner::reduced_tiling(int i, NamedSharding const& input) const {
  GraphNode const& n = node(i);
  FixedVector<AxisList, max_rank> dims;
  AxisList partial;
  Shape const& in_shape = node(n.children[0]).shape;
  for (std::size_t d = 0; d < in_shape.size(); ++d) {
    bool reduced = std::find(n.axes.begin(), n.axes.end(), static_cast<std::uint8_t>(d)) != n.axes.end();
    if (reduced) {
      for (auto a : effective_axes(input.mesh().axes(), input.layout().dim_axes(d))) partial.push_back(a);
      if (n.keepdims) dims.push_back({});
    } else {
      dims.push_back(input.layout().dim_axes(d));
    }
  }
  return {sharding_from_axes(input.mesh(), dims), partial};
}

constexpr NamedSharding Planner::refine_kept(int i, NamedSharding const& input, NamedSharding const& req) const {
  GraphNode const& n = node(i);
  if (!(input.mesh() == req.mesh())) return input;
  MeshAxes const& mesh = input.mesh().axes();
  Shape const& in_shape = node(n.children[0]).shape;
  FixedVector<AxisList, max_rank> dims;
  AxisList used;
  for (std::size_t d = 0; d < in_shape.size(); ++d) {
    dims.push_back(effective_axes(mesh, input.layout().dim_axes(d)));
    for (auto a : dims.back()) used.push_back(a);
  }
  std::size_t out = 0;
  bool changed = false;
  for (std::size_t d = 0; d < in_shape.size(); ++d) {
    bool reduced = std::find(n.axes.begin(), n.axes.end(), static_cast<std::uint8_t>(d)) != n.axes.end();
    if (reduced) {
      out += n.keepdims ? 1 : 0;
      continue;
    }
    AxisList want = effective_axes(mesh, req.layout().dim_axes(out++));
    std::size_t k = 0;
    while (k < dims[d].size() && k < want.size() && dims[d][k] == want[k]) ++k;
    if (k < dims[d].size()) continue;
    for (; k < want.size() && std::find(used.begin(), used.end(), want[k]) == used.end(); ++k) {
      dims[d].push_back(want[k]);
      used.push_back(want[k]);
      changed = true;
    }
  }
  return changed ? sharding_from_axes(input.mesh(), dims) : input;
}

constexpr double Planner::reshard_cost(int child, NamedSharding const& target) const {
  auto const& have = natural[static_cast<std::size_t>(child)];
  if (!have) return 0;  // scalars
  GraphNode const& c = g[static_cast<std::size_t>(child)];
  // Each collective the change amounts to, priced by its own formula (local slices are free
  // unless the model was calibrated).
  return model.reshard_us(decompose(c.shape, c.dtype_bytes, *have, target));
}

constexpr bool Planner::row_fusable(int r, NamedSharding const& consumer, Shape const& consumer_shape) const {
  GraphNode const& n = g[static_cast<std::size_t>(r)];
  if (n.kind != NodeKind::reduce || !n.keepdims || consumer_shape.empty()) return false;
  Shape const& in = g[static_cast<std::size_t>(n.children[0])].shape;
  return n.axes.size() == 1 && n.axes[0] == in.size() - 1 && in == consumer_shape &&
         consumer.layout().dim_axes(in.size() - 1).empty();
}

constexpr bool Planner::per_row_value(int c, NamedSharding const& sharding, Shape const& shape) const {
  GraphNode const& n = g[static_cast<std::size_t>(c)];
  if (n.kind != NodeKind::elementwise || shape.empty() || n.shape.size() != shape.size() || shape.back() == 1)
    return false;
  if (!sharding.layout().dim_axes(shape.size() - 1).empty()) return false;
  return n.shape.back() == 1 && std::equal(shape.begin(), shape.end() - 1, n.shape.begin());
}

constexpr bool Planner::scatter_reaches(NamedSharding const& partial, AxisList const& axes, NamedSharding const& want,
                              std::size_t rank) {
  if (!(partial.mesh() == want.mesh())) return false;
  AxisList added;
  for (std::size_t d = 0; d < rank; ++d) {
    auto have = effective_axes(partial.mesh().axes(), partial.layout().dim_axes(d));
    auto need = effective_axes(want.mesh().axes(), want.layout().dim_axes(d));
    if (need.size() < have.size() || !std::equal(have.begin(), have.end(), need.begin())) return false;
    for (std::size_t k = have.size(); k < need.size(); ++k) added.push_back(need[k]);
  }
  if (added.size() != axes.size()) return false;
  return std::all_of(added.begin(), added.end(),
                     [&](auto a) { return std::find(axes.begin(), axes.end(), a) != axes.end(); });
}

constexpr void Planner::complete_partial(NodePlan& p, NamedSharding const& partial, AxisList const& axes,
                               std::optional<NamedSharding> const& req, std::size_t rank) {
  p.partial = partial;
  p.collective_axes = axes;
  if (axes.empty()) {
    p.after_collective = partial;
  } else if (req && scatter_reaches(partial, axes, *req, rank)) {
    p.collective = Collective::reduce_scatter;
    p.after_collective = *req;
  } else {
    p.collective = Collective::all_reduce;
    p.after_collective = partial;
  }
  p.out = req ? *req : *p.after_collective;
  p.reshard = !(*p.out == *p.after_collective);
}


// nvcc's front end takes Planner (its std::optional<Plan> member) for a non-literal type and refuses
// it in a constexpr function: there the planner is an ordinary function, run when a jitted call
// first needs its plan, and static_jit says it cannot plan in nvcc's compiler
// (runtime/static_jit.hpp). Inline there as constexpr makes it elsewhere: the header is included by
// planner.cpp and by every source that uses static_jit.hpp, and each would define it again.
#if TESSEL_NVCC
#define TESSEL_DETAIL_PLANNER_CONSTEXPR inline
#else
#define TESSEL_DETAIL_PLANNER_CONSTEXPR constexpr
#endif

TESSEL_DETAIL_PLANNER_CONSTEXPR Plan plan_with(Graph graph, std::optional<NamedSharding> const& requested,
                                               CostModel const& model) {
  Plan plan;
  plan.graph = std::move(graph);
  Graph const& g = plan.graph;
  int root = static_cast<int>(g.size()) - 1;
  Planner planner{g, model, std::vector<std::optional<NamedSharding>>(g.size()), std::vector<NodePlan>(g.size()),
                  std::vector<std::optional<Planner::RowRegion>>(g.size()), value_classes(g)};
  planner.made_apart.assign(g.size(), 0);
  planner.forward();
  planner.assign(root, requested);
  share_common_values(g, planner.plans);
  plan.nodes = std::move(planner.plans);
  schedule(plan, model);
  return plan;
}

constexpr double total_estimate_us(Plan const& plan) {
  double us = 0;
  for (auto const& s : plan.steps) us += s.estimate_us;
  return us;
}


// A requested output is met one of two ways, whichever the cost model prices lower (ties to the
// first): the request pushed down the graph (every node computes in the layout the request
// implies), or the graph computed in its natural shardings and the result resharded once at the
// end (what XLA's partitioner does when the request does not suit the computation: a softmax
// over rows split by the request's axes would need collectives for every row statistic).
// Inside shard_map's body (a graph holding per-device values, or an explicit collective) every
// tensor must be per-device blocks or equal on every device: a sharded tensor from outside the body
// would be resharded against blocks that are not slices of one global value.
constexpr void check_manual(Graph const& g, std::optional<NamedSharding> const& requested) {
  bool manual = false;
  for (auto const& n : g) manual = manual || n.varying != 0 || n.kind == NodeKind::manual_collective;
  if (!manual) return;
  for (auto const& n : g) {
    if (n.kind != NodeKind::tensor || !n.sharding || n.sharding->mesh().num_devices() == 1 ||
        n.sharding->is_fully_replicated())
      continue;
    throw Error(std::format("shard_map: the body uses a {} tensor sharded {} on {} that is not one of its arguments: "
                            "inside shard_map every value is one device's block; pass it as an argument with an "
                            "in_spec, or replicate it first (device_put with P())",
                            type_text(n), to_string(n.sharding->spec()), to_string(n.sharding->mesh())));
  }
  if (requested && g.back().varying)
    throw Error(std::format("eval: a per-device value inside shard_map (its blocks differ along mesh axes {}) cannot "
                            "be given the sharding {}; return it from the body and give its layout in out_specs",
                            varying_text(requested->mesh().axes(), g.back().varying), to_string(*requested)));
}

// The natural plan's result resharded to the request, as steps at its end (its root's plan keeps
// the natural sharding: a plan whose root's out differs from the request ends so).
constexpr void reshard_result(Plan& plan, NamedSharding const& requested, CostModel const& model) {
  int root = static_cast<int>(plan.graph.size()) - 1;
  Scheduler{plan, model}.reshard_steps(root, plan.slot.back(), *plan.nodes.back().out, requested, "result");
  plan.slot.back() = root;  // the reshard's steps write the root's own slot
}

TESSEL_DETAIL_PLANNER_CONSTEXPR Plan plan_program(Graph graph, std::optional<NamedSharding> const& requested,
                                                  CostModel const& model) {
  check_manual(graph, requested);
  if (!graph.empty() && requested) requested->check_shape(graph.back().shape);
  if (graph.empty() || !requested) return plan_with(std::move(graph), requested, model);
  Plan pushed = plan_with(graph, requested, model);
  Plan natural = plan_with(std::move(graph), std::nullopt, model);
  if (*natural.nodes.back().out == *requested) return pushed;
  reshard_result(natural, *requested, model);
  return total_estimate_us(natural) < total_estimate_us(pushed) ? std::move(natural) : std::move(pushed);
}

}  // namespace tessel::plan
