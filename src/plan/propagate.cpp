// Sharding propagation, collective choice and fusion boundaries. The rules follow GSPMD:
// elementwise operands agree on one tiling (the cheapest to reach, by the cost model); a reduction
// over sharded dimensions leaves partial results that an all-reduce (or, when the requested output
// wants it, a reduce-scatter) completes; a sharding constraint is a hard requirement.
#include <algorithm>
#include <format>

#include "tessel/core/error.hpp"
#include "tessel/plan/passes.hpp"
#include "tessel/plan/view_rules.hpp"

namespace tessel::plan {
namespace {

using AxisList = ShardLayout::AxisList;

// The tiling of `s` (for a value of shape `from`) seen from an operand of shape `to` broadcast
// into it (dimensions aligned from the right; broadcast dimensions are not split).
NamedSharding project(NamedSharding const& s, Shape const& from, Shape const& to) {
  FixedVector<AxisList, max_rank> dims;
  for (std::size_t j = 0; j < to.size(); ++j) {
    std::ptrdiff_t d = static_cast<std::ptrdiff_t>(j) + static_cast<std::ptrdiff_t>(from.size()) -
                       static_cast<std::ptrdiff_t>(to.size());
    if (d < 0 || from[static_cast<std::size_t>(d)] != to[j]) dims.push_back({});
    else dims.push_back(s.layout().dim_axes(static_cast<std::size_t>(d)));
  }
  return sharding_from_axes(s.mesh(), dims);
}

struct Planner {
  Graph const& g;
  CostModel const& model;
  std::vector<std::optional<NamedSharding>> natural;
  std::vector<NodePlan> plans;

  // What a reduce node's per-device results look like: the input's tiling on the kept dimensions
  // (reduced dimensions dropped, or unsplit when kept), and the mesh axes left partial.
  std::pair<NamedSharding, AxisList> partial_of(int i, NamedSharding const& input) const {
    GraphNode const& n = g[static_cast<std::size_t>(i)];
    FixedVector<AxisList, max_rank> dims;
    AxisList partial;
    Shape const& in_shape = g[static_cast<std::size_t>(n.children[0])].shape;
    for (std::size_t d = 0; d < in_shape.size(); ++d) {
      bool reduced = std::find(n.axes.begin(), n.axes.end(), static_cast<std::uint8_t>(d)) != n.axes.end();
      if (reduced) {
        for (auto a : input.layout().dim_axes(d)) partial.push_back(a);
        if (n.keepdims) dims.push_back({});
      } else {
        dims.push_back(input.layout().dim_axes(d));
      }
    }
    return {sharding_from_axes(input.mesh(), dims), partial};
  }

  double reshard_cost(int child, NamedSharding const& target) const {
    auto const& have = natural[static_cast<std::size_t>(child)];
    if (!have) return 0;  // scalars
    GraphNode const& c = g[static_cast<std::size_t>(child)];
    // Each collective the change amounts to, priced by its own formula (local slices are free
    // unless the model was calibrated).
    return model.reshard_us(decompose(c.shape, c.dtype_bytes, *have, target));
  }

  // The operand tiling a node adopts: among the candidates (one per operand, from
  // `candidate_of(operand)`), the one with the least total cost to bring every operand to it (seen
  // from that operand's shape). Ties go to the earlier operand, so the choice is deterministic.
  // Operands on a single device (uncommitted) only propose when nothing else does.
  template <class CandidateOf>
  NamedSharding cheapest_tiling(int i, CandidateOf const& candidate_of) const {
    GraphNode const& n = g[static_cast<std::size_t>(i)];
    std::optional<NamedSharding> best;
    double best_cost = 0;
    bool any_multi = false;
    for (int c : n.children)
      if (natural[static_cast<std::size_t>(c)] && natural[static_cast<std::size_t>(c)]->mesh().num_devices() > 1)
        any_multi = true;
    for (int c : n.children) {
      auto const& s = natural[static_cast<std::size_t>(c)];
      if (!s || (any_multi && s->mesh().num_devices() == 1)) continue;
      NamedSharding candidate = candidate_of(c, *s);
      double cost = 0;
      for (int o : n.children)
        cost += reshard_cost(o, project(candidate, n.shape, g[static_cast<std::size_t>(o)].shape));
      if (!best || cost < best_cost) {
        best = candidate;
        best_cost = cost;
      }
    }
    return *best;
  }

  // Elementwise operands: each operand's tiling seen from the result.
  NamedSharding choose_elementwise(int i) const {
    Shape const& shape = g[static_cast<std::size_t>(i)].shape;
    return cheapest_tiling(i, [&](int c, NamedSharding const& s) { return project(s, g[static_cast<std::size_t>(c)].shape, shape); });
  }

  // concatenate's common operand sharding: an operand's sharding with the concatenated dimension
  // unsharded.
  NamedSharding choose_concat(int i) const {
    GraphNode const& n = g[static_cast<std::size_t>(i)];
    return cheapest_tiling(i, [&](int, NamedSharding const& s) { return unshard_dimension(s, n.shape.size(), n.axis); });
  }

  void forward() {
    for (std::size_t i = 0; i < g.size(); ++i) {
      GraphNode const& n = g[i];
      switch (n.kind) {
        case NodeKind::tensor:
        case NodeKind::constraint: natural[i] = n.sharding; break;
        case NodeKind::scalar: break;
        case NodeKind::elementwise: natural[i] = choose_elementwise(static_cast<int>(i)); break;
        case NodeKind::reduce:
          natural[i] = partial_of(static_cast<int>(i), *natural[static_cast<std::size_t>(n.children[0])]).first;
          break;
        case NodeKind::dot: natural[i] = choose_dot(static_cast<int>(i), std::nullopt).after; break;
        case NodeKind::view: natural[i] = view_of(static_cast<int>(i)).output; break;
        case NodeKind::concatenate: natural[i] = choose_concat(static_cast<int>(i)); break;
      }
    }
  }

  // A reduce over the last axis, with keepdims, whose input has the consumer's shape and whose
  // reduced axis the consumer does not split, runs inside the consumer's kernel, one row at a time.
  bool row_fusable(int r, NamedSharding const& consumer, Shape const& consumer_shape) const {
    GraphNode const& n = g[static_cast<std::size_t>(r)];
    if (n.kind != NodeKind::reduce || !n.keepdims || consumer_shape.empty()) return false;
    Shape const& in = g[static_cast<std::size_t>(n.children[0])].shape;
    return n.axes.size() == 1 && n.axes[0] == in.size() - 1 && in == consumer_shape &&
           consumer.layout().dim_axes(in.size() - 1).empty();
  }

  // Can a reduce-scatter produce `want` from partial results tiled as `partial` with `axes` left
  // to reduce? Yes when `want` extends the partial tiling with exactly those axes.
  static bool scatter_reaches(NamedSharding const& partial, AxisList const& axes, NamedSharding const& want,
                              std::size_t rank) {
    if (!(partial.mesh() == want.mesh())) return false;
    AxisList added;
    for (std::size_t d = 0; d < rank; ++d) {
      auto have = partial.layout().dim_axes(d);
      auto need = want.layout().dim_axes(d);
      if (need.size() < have.size() || !std::equal(have.begin(), have.end(), need.begin())) return false;
      for (std::size_t k = have.size(); k < need.size(); ++k) added.push_back(need[k]);
    }
    if (added.size() != axes.size()) return false;
    return std::all_of(added.begin(), added.end(),
                       [&](auto a) { return std::find(axes.begin(), axes.end(), a) != axes.end(); });
  }

  // How partial results (tiled as `partial`, still to be summed over `axes`) become the node's
  // value: nothing, an all-reduce, or a reduce-scatter when that lands right on the request.
  static void complete_partial(NodePlan& p, NamedSharding const& partial, AxisList const& axes,
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

  // dot_general, GSPMD's factor rules: every dimension is a batch, lhs-free, rhs-free or
  // contracting factor, and each factor takes mesh axes from one operand. Sharded contracting
  // factors leave partial sums (an all-reduce, or a reduce-scatter). Candidates: factors as the
  // lhs has them, as the rhs has them, with nothing on the contracting factors, and (when the
  // result's sharding is requested) the request's axes on the free factors. The cost model
  // (reshards of the operands, the collective, the reshard of the result) picks one; ties go to
  // the earlier candidate.
  struct DotChoice {
    NamedSharding lhs, rhs, partial, after;
    AxisList contract_axes;
    double cost;
  };

  DotChoice choose_dot(int i, std::optional<NamedSharding> const& req) const {
    GraphNode const& n = g[static_cast<std::size_t>(i)];
    GraphNode const& L = g[static_cast<std::size_t>(n.children[0])];
    GraphNode const& R = g[static_cast<std::size_t>(n.children[1])];
    auto const& sl = *natural[static_cast<std::size_t>(n.children[0])];
    auto const& sr = *natural[static_cast<std::size_t>(n.children[1])];
    Mesh const& mesh = sl.mesh().num_devices() >= sr.mesh().num_devices() ? sl.mesh() : sr.mesh();
    auto axes_of = [&](NamedSharding const& s, std::size_t d) { return s.mesh() == mesh ? s.layout().dim_axes(d) : AxisList{}; };
    DotDims const& dd = n.dot;
    auto in = [](auto const& list, std::size_t d) { return std::find(list.begin(), list.end(), d) != list.end(); };
    FixedVector<std::uint8_t, max_rank> lfree, rfree;
    for (std::size_t d = 0; d < L.shape.size(); ++d)
      if (!in(dd.lhs_batch, d) && !in(dd.lhs_contract, d)) lfree.push_back(static_cast<std::uint8_t>(d));
    for (std::size_t d = 0; d < R.shape.size(); ++d)
      if (!in(dd.rhs_batch, d) && !in(dd.rhs_contract, d)) rfree.push_back(static_cast<std::uint8_t>(d));

    struct Factors {
      FixedVector<AxisList, max_rank> batch, contract, m, n;
    };
    auto from = [&](NamedSharding const& s, auto const& dims) {
      FixedVector<AxisList, max_rank> out;
      for (auto d : dims) out.push_back(axes_of(s, d));
      return out;
    };
    Factors lhs_view{from(sl, dd.lhs_batch), from(sl, dd.lhs_contract), from(sl, lfree), from(sr, rfree)};
    Factors rhs_view{from(sr, dd.rhs_batch), from(sr, dd.rhs_contract), from(sl, lfree), from(sr, rfree)};
    Factors no_contract = lhs_view;
    for (auto& k : no_contract.contract) k.clear();
    std::vector<std::pair<Factors, bool>> candidates{{lhs_view, false}, {rhs_view, true}, {no_contract, false}};
    if (req && req->mesh() == mesh) {
      Factors r;
      std::size_t d = 0;
      for (std::size_t b = 0; b < dd.lhs_batch.size(); ++b) r.batch.push_back(req->layout().dim_axes(d++));
      for (std::size_t k = 0; k < dd.lhs_contract.size(); ++k) r.contract.push_back({});
      for (std::size_t k = 0; k < lfree.size(); ++k) r.m.push_back(req->layout().dim_axes(d++));
      for (std::size_t k = 0; k < rfree.size(); ++k) r.n.push_back(req->layout().dim_axes(d++));
      candidates.push_back({r, false});
    }

    std::optional<DotChoice> best;
    for (auto& [f, rhs_first] : candidates) {
      // A mesh axis may serve one factor only: later factors drop axes earlier ones took.
      AxisList used;
      auto keep = [&](AxisList& axes) {
        AxisList kept;
        for (auto a : axes)
          if (std::find(used.begin(), used.end(), a) == used.end()) {
            kept.push_back(a);
            used.push_back(a);
          }
        axes = kept;
      };
      for (auto& a : f.batch) keep(a);
      for (auto& a : f.contract) keep(a);
      if (rhs_first) {
        for (auto& a : f.n) keep(a);
        for (auto& a : f.m) keep(a);
      } else {
        for (auto& a : f.m) keep(a);
        for (auto& a : f.n) keep(a);
      }
      FixedVector<AxisList, max_rank> ldims(L.shape.size(), AxisList{}), rdims(R.shape.size(), AxisList{}), odims;
      AxisList k_axes;
      for (std::size_t b = 0; b < dd.lhs_batch.size(); ++b) {
        ldims[dd.lhs_batch[b]] = f.batch[b];
        rdims[dd.rhs_batch[b]] = f.batch[b];
        odims.push_back(f.batch[b]);
      }
      for (std::size_t k = 0; k < dd.lhs_contract.size(); ++k) {
        ldims[dd.lhs_contract[k]] = f.contract[k];
        rdims[dd.rhs_contract[k]] = f.contract[k];
        for (auto a : f.contract[k]) k_axes.push_back(a);
      }
      for (std::size_t k = 0; k < lfree.size(); ++k) {
        ldims[lfree[k]] = f.m[k];
        odims.push_back(f.m[k]);
      }
      for (std::size_t k = 0; k < rfree.size(); ++k) {
        rdims[rfree[k]] = f.n[k];
        odims.push_back(f.n[k]);
      }
      DotChoice c{sharding_from_axes(mesh, ldims), sharding_from_axes(mesh, rdims), sharding_from_axes(mesh, odims),
                  sharding_from_axes(mesh, odims), k_axes, 0};
      c.cost = reshard_cost(n.children[0], c.lhs) + reshard_cost(n.children[1], c.rhs);
      double out_bytes = static_cast<double>(c.partial.shard_shape(n.shape).num_elements() * n.dtype_bytes);
      int group = 1;
      for (auto a : k_axes) group *= mesh.axes().size(a);
      if (!k_axes.empty() && req && scatter_reaches(c.partial, k_axes, *req, n.shape.size())) {
        c.cost += model.reduce_scatter_us(out_bytes, group);
        c.after = *req;
      } else {
        c.cost += model.all_reduce_us(out_bytes, group);
        if (req) c.cost += model.reshard_us(decompose(n.shape, n.dtype_bytes, c.after, *req));
      }
      if (!best || c.cost < best->cost) best = c;
    }
    return *best;
  }

  // A view's operand and result shardings, from the operand's natural sharding.
  ViewShardings view_of(int i) const {
    GraphNode const& n = g[static_cast<std::size_t>(i)];
    GraphNode const& c = g[static_cast<std::size_t>(n.children[0])];
    return view_shardings(n.view, c.shape, n.shape, *natural[static_cast<std::size_t>(n.children[0])]);
  }

  void assign(int i, std::optional<NamedSharding> const& req) {
    GraphNode const& n = g[static_cast<std::size_t>(i)];
    NodePlan& p = plans[static_cast<std::size_t>(i)];
    switch (n.kind) {
      case NodeKind::scalar: return;
      case NodeKind::tensor:
        p.out = req ? *req : *n.sharding;
        p.reshard = !(*p.out == *n.sharding);
        return;
      case NodeKind::constraint:
        assign(n.children[0], n.sharding);
        p.out = req ? *req : *n.sharding;
        p.reshard = !(*p.out == *n.sharding);
        return;
      case NodeKind::elementwise: {
        p.out = req ? *req : *natural[static_cast<std::size_t>(i)];
        for (int c : n.children) {
          GraphNode const& child = g[static_cast<std::size_t>(c)];
          if (row_fusable(c, *p.out, n.shape)) {
            NodePlan& cp = plans[static_cast<std::size_t>(c)];
            cp.row_fused = true;
            cp.out = project(*p.out, n.shape, child.shape);
            assign(child.children[0], p.out);
          } else {
            assign(c, project(*p.out, n.shape, child.shape));
          }
        }
        return;
      }
      case NodeKind::reduce: {
        int c = n.children[0];
        assign(c, natural[static_cast<std::size_t>(c)]);
        auto [partial, axes] = partial_of(i, *plans[static_cast<std::size_t>(c)].out);
        complete_partial(p, partial, axes, req, n.shape.size());
        return;
      }
      case NodeKind::view: {
        ViewShardings v = view_of(i);
        assign(n.children[0], v.input);
        p.after_collective = v.output;  // the view's own sharding, before any reshard
        p.out = req ? *req : v.output;
        p.reshard = !(*p.out == v.output);
        return;
      }
      case NodeKind::concatenate: {
        NamedSharding common = *natural[static_cast<std::size_t>(i)];
        for (int c : n.children) assign(c, common);
        p.after_collective = common;
        p.out = req ? *req : common;
        p.reshard = !(*p.out == common);
        return;
      }
      case NodeKind::dot: {
        DotChoice d = choose_dot(i, req);
        assign(n.children[0], d.lhs);
        assign(n.children[1], d.rhs);
        complete_partial(p, d.partial, d.contract_axes, req, n.shape.size());
        return;
      }
    }
  }
};

}  // namespace

Plan make_plan(Graph graph, std::optional<NamedSharding> const& requested, CostModel const& model) {
  Plan plan{std::move(graph), {}, {}, {}};
  Graph const& g = plan.graph;
  int root = static_cast<int>(g.size()) - 1;
  if (requested) requested->check_shape(g.back().shape);
  Planner planner{g, model, std::vector<std::optional<NamedSharding>>(g.size()), std::vector<NodePlan>(g.size())};
  planner.forward();
  planner.assign(root, requested);
  share_common_values(g, planner.plans);
  plan.nodes = std::move(planner.plans);
  schedule(plan, model);
  return plan;
}

}  // namespace tessel::plan
