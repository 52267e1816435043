#pragma once
// dot_general: its sharding rule stated as factors (plan/detail/factors.hpp resolves and prices
// the candidates); each device multiplies its blocks with a BLAS GEMM, and sharded contracting
// dimensions leave partial sums for a collective.
#include <algorithm>
#include <array>
#include <format>
#include <string>
#include <string_view>

#include "tessel/plan/detail/factors.hpp"
#include "tessel/plan/detail/planner.hpp"

namespace tessel::plan {

// What multiplies each device's blocks, as the runtime's local_dot picks it: a float64 result
// takes dgemm; two operands of one 16-bit float dtype take a 16-bit GEMM that sums in float32 (the
// backend's, or sgemm of the widened operands where it has none: the plan does not depend on the
// machine); anything else, sgemm of float32 operands.
constexpr std::string gemm_text(GraphNode const& lhs, GraphNode const& rhs, GraphNode const& out) {
  std::string_view const l = lhs.dtype, r = rhs.dtype;
  if (out.dtype_bytes == 8) return "BLAS dgemm";
  if (l == r && (l == "bfloat16" || l == "float16")) return std::string(l) + " GEMM (float32 sums)";
  return "BLAS sgemm";
}

// dot_general's sharding rule: every dimension is a batch, contracting, lhs-free or rhs-free
// factor (GSPMD's, Shardy's), numbered in that order; contracting factors are reduced.
// Candidates (factors/detail's generic code resolves and prices them; ties go to the earlier):
// the factors as the lhs has them, as the rhs has them, with nothing on the contracting factors,
// and, when the result's sharding is requested, the request's axes on the free factors (with no
// contraction, or one as either operand splits it), each with either free factor claiming a
// shared axis first.
struct DotFactors {
  FactorRule rule;
  DotMapping map;              // which operand dimensions are free (dot_mapping)
  std::size_t nb, nk, nm, nn;  // batch, contracting, lhs-free and rhs-free factors
  [[nodiscard]] constexpr int batch(std::size_t k) const { return static_cast<int>(k); }
  [[nodiscard]] constexpr int contract(std::size_t k) const { return static_cast<int>(nb + k); }
  [[nodiscard]] constexpr int m(std::size_t k) const { return static_cast<int>(nb + nk + k); }
  [[nodiscard]] constexpr int n(std::size_t k) const { return static_cast<int>(nb + nk + nm + k); }
  // The order in which factors claim mesh axes: batch, contracting, then either free factor first.
  [[nodiscard]] constexpr std::vector<int> order(bool rhs_first) const {
    std::vector<int> o;
    for (std::size_t k = 0; k < nb; ++k) o.push_back(batch(k));
    for (std::size_t k = 0; k < nk; ++k) o.push_back(contract(k));
    for (int pass = 0; pass < 2; ++pass) {
      bool const rhs = (pass == 0) == rhs_first;
      for (std::size_t k = 0; k < (rhs ? nn : nm); ++k) o.push_back(rhs ? n(k) : m(k));
    }
    return o;
  }
};

constexpr DotFactors dot_factors(DotDims const& dd, std::size_t lhs_rank, std::size_t rhs_rank) {
  DotMapping const map = dot_mapping(dd, lhs_rank, rhs_rank);
  DotFactors f{{}, map, dd.lhs_batch.size(), dd.lhs_contract.size(), map.lhs_free.size(), map.rhs_free.size()};
  std::vector<int> lhs(lhs_rank), rhs(rhs_rank);
  for (std::size_t k = 0; k < f.nb; ++k) lhs[dd.lhs_batch[k]] = rhs[dd.rhs_batch[k]] = f.batch(k);
  for (std::size_t k = 0; k < f.nk; ++k) lhs[dd.lhs_contract[k]] = rhs[dd.rhs_contract[k]] = f.contract(k);
  for (std::size_t k = 0; k < f.nm; ++k) lhs[map.lhs_free[k]] = f.m(k);
  for (std::size_t k = 0; k < f.nn; ++k) rhs[map.rhs_free[k]] = f.n(k);
  f.rule.operand_factors = {lhs, rhs};
  for (std::size_t k = 0; k < f.nb; ++k) f.rule.result_factors.push_back(f.batch(k));
  for (std::size_t k = 0; k < f.nm; ++k) f.rule.result_factors.push_back(f.m(k));
  for (std::size_t k = 0; k < f.nn; ++k) f.rule.result_factors.push_back(f.n(k));
  f.rule.factors = static_cast<int>(f.nb + f.nk + f.nm + f.nn);
  return f;
}

constexpr FactorChoice choose_dot(Planner const& p, int i, std::optional<NamedSharding> const& req) {
  GraphNode const& n = p.node(i);
  GraphNode const& L = p.node(n.children[0]);
  GraphNode const& R = p.node(n.children[1]);
  auto const& sl = p.natural_of(n.children[0]);
  auto const& sr = p.natural_of(n.children[1]);
  Mesh const& mesh = sl.mesh().num_devices() >= sr.mesh().num_devices() ? sl.mesh() : sr.mesh();
  auto axes_of = [&](NamedSharding const& s, std::size_t d) { return s.mesh() == mesh ? s.layout().dim_axes(d) : AxisList{}; };
  DotDims const& dd = n.dot;
  DotFactors const f = dot_factors(dd, L.shape.size(), R.shape.size());
  DotMapping const& map = f.map;

  // A factor's axes as an operand has them: the lhs's batch and contracting factors, or the rhs's;
  // each free factor from the operand holding it.
  auto as_held = [&](bool by_rhs) {
    std::vector<AxisList> axes(static_cast<std::size_t>(f.rule.factors));
    for (std::size_t k = 0; k < f.nb; ++k)
      axes[static_cast<std::size_t>(f.batch(k))] = by_rhs ? axes_of(sr, dd.rhs_batch[k]) : axes_of(sl, dd.lhs_batch[k]);
    for (std::size_t k = 0; k < f.nk; ++k)
      axes[static_cast<std::size_t>(f.contract(k))] =
          by_rhs ? axes_of(sr, dd.rhs_contract[k]) : axes_of(sl, dd.lhs_contract[k]);
    for (std::size_t k = 0; k < f.nm; ++k) axes[static_cast<std::size_t>(f.m(k))] = axes_of(sl, map.lhs_free[k]);
    for (std::size_t k = 0; k < f.nn; ++k) axes[static_cast<std::size_t>(f.n(k))] = axes_of(sr, map.rhs_free[k]);
    return axes;
  };
  auto without_contraction = [&](std::vector<AxisList> axes) {
    for (std::size_t k = 0; k < f.nk; ++k) axes[static_cast<std::size_t>(f.contract(k))].clear();
    return axes;
  };
  std::vector<AxisList> const lhs_view = as_held(false), rhs_view = as_held(true),
                              no_contract = without_contraction(lhs_view);
  // Then the same factors with the other operand's free factor first to keep a shared axis (the
  // contraction split as the lhs has it while the result keeps the rhs's columns: x[m,k] on
  // P('a', 'b') @ w[k,n] on P(None, 'a') gathers x's rows and all-reduces over 'b').
  std::vector<FactorCandidate> candidates{{lhs_view, f.order(false)},   {rhs_view, f.order(true)},
                                          {no_contract, f.order(false)}, {lhs_view, f.order(true)},
                                          {rhs_view, f.order(false)},    {no_contract, f.order(true)}};
  if (req && req->mesh() == mesh) {
    std::vector<AxisList> r(static_cast<std::size_t>(f.rule.factors));
    std::size_t d = 0;
    for (std::size_t k = 0; k < f.nb; ++k) r[static_cast<std::size_t>(f.batch(k))] = req->layout().dim_axes(d++);
    for (std::size_t k = 0; k < f.nm; ++k) r[static_cast<std::size_t>(f.m(k))] = req->layout().dim_axes(d++);
    for (std::size_t k = 0; k < f.nn; ++k) r[static_cast<std::size_t>(f.n(k))] = req->layout().dim_axes(d++);
    candidates.push_back({r, f.order(false)});
    // The request's free factors with a contraction kept as an operand splits it: the partial
    // results are sliced as the request wants before their all-reduce (which then combines less).
    std::vector<AxisList> r_lhs = r, r_rhs = r;
    for (std::size_t k = 0; k < f.nk; ++k) {
      auto const c = static_cast<std::size_t>(f.contract(k));
      r_lhs[c] = lhs_view[c];
      r_rhs[c] = rhs_view[c];
    }
    candidates.push_back({r_lhs, f.order(false)});
    candidates.push_back({r_rhs, f.order(false)});
  }
  return choose_by_factors(p, i, mesh, f.rule, candidates, req);
}

class DotRules final : public OpRules {
 public:
  // 2 * batch * m * n * k, from the device's lhs and result blocks.
  constexpr StepWork work(GraphNode const& n, Step const&, StepBlocks const& b) const override {
    if (b.reads.size() != 2 || !b.made) return counting::none();
    GemmDims g = gemm_dims(n.dot, b.reads[0], *b.made);
    StepWork w;
    w.flops = 2.0 * static_cast<double>(g.batch * g.m * g.n) * static_cast<double>(g.k);
    w.gemm = g;
    return w;
  }
  constexpr std::optional<NamedSharding> natural(Planner const& p, int i) const override {
    return choose_dot(p, i, std::nullopt).after;
  }
  constexpr void assign(Planner& p, int i, std::optional<NamedSharding> const& req) const override {
    GraphNode const& n = p.node(i);
    FactorChoice d = choose_dot(p, i, req);
    for (int c : n.children) p.made_apart[static_cast<std::size_t>(c)] = 1;  // the GEMM reads tensors
    p.assign(n.children[0], d.operands[0]);
    p.assign(n.children[1], d.operands[1]);
    Planner::complete_partial(p.plan(i), d.partial, d.reduced_axes, req, n.shape.size());
  }
  constexpr void region(Scheduler& s, int i, Region& r) const override { s.boundary(i, r); }
  // A slice or transpose the GEMM reads as it is, with its own sharding: it reads the view's
  // operand in place (a strided matrix per batch entry where the strides allow, runtime/local_dot)
  // instead of a copy the view would make. A decode step's attention over the first positions of a
  // preallocated cache is such a slice.
  static constexpr bool read_in_place(Scheduler const& s, int c) {
    GraphNode const& v = s.node(c);
    NodePlan const& p = s.at(c);
    return v.kind == NodeKind::view && (v.view.kind == ViewKind::slice || v.view.kind == ViewKind::transpose) &&
           !p.reshard && p.reuses < 0 && p.same_as < 0;
  }
  constexpr void materialize(Scheduler& s, int i) const override {
    GraphNode const& n = s.node(i);
    std::array<int, 2> reads{}, through{-1, -1};
    for (std::size_t k = 0; k < 2; ++k) {
      int const c = n.children[k];
      int const read = read_in_place(s, c) ? s.node(c).children[0] : c;
      s.operand(read);
      reads[k] = s.slot(read);
      if (read != c) through[k] = c;
    }
    auto const& sh = *s.at(i).partial;
    s.add(StepKind::kernel, i, sh.mesh().num_devices(), {"gemm", s.user_op(i)}, {reads[0], reads[1]}).through_view =
        through;
    s.collective_steps(i);
    s.result_reshard(i);
  }
  // The GEMM, then the collective completing its partial sums.
  std::string explain(Plan const& plan, Step const& step) const override {
    if (step.kind != StepKind::kernel) return reduction_text(plan, step, "dot_general contracting sharded dimensions");
    GraphNode const& n = node_of(plan, step);
    auto const& sh = *plan_of(plan, step.node).partial;
    std::string in_place;
    for (int v : step.through_view)
      if (v >= 0) in_place += std::format(", reads {}#{} in place", plan.graph[static_cast<std::size_t>(v)].op, v);
    return std::format("gemm      dot_general -> {} {} on {} devices: {} per device, local result {}{}", type_text(n),
                       to_string(sh.spec()), sh.mesh().num_devices(),
                       gemm_text(plan.graph[static_cast<std::size_t>(n.children[0])],
                                 plan.graph[static_cast<std::size_t>(n.children[1])], n),
                       block_shapes_text(sh, n.shape), in_place);
  }
};


inline constexpr DotRules dot_rules{};

}  // namespace tessel::plan
