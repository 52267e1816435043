#pragma once
// dot_general: GSPMD's factor rules, priced by the cost model; each device multiplies its blocks
// with a BLAS GEMM, and sharded contracting dimensions leave partial sums for a collective.
#include <algorithm>
#include <format>
#include <string>
#include <string_view>

#include "tessel/plan/detail/planner.hpp"

namespace tessel::plan {

// dot_general, GSPMD's factor rules: every dimension is a batch, lhs-free, rhs-free or
// contracting factor, and each factor takes mesh axes from one operand. Sharded contracting
// factors leave partial sums (an all-reduce, or a reduce-scatter). Candidates: factors as the
// lhs has them, as the rhs has them, with nothing on the contracting factors, and (when the
// result's sharding is requested) the request's axes on the free factors, each with either free
// factor first to keep an axis both want. The cost model
// (reshards of the operands, the collective, the reshard of the result) picks one; ties go to
// the earlier candidate.
struct DotChoice {
  NamedSharding lhs, rhs, partial, after;
  AxisList contract_axes;
  double cost;
};

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

constexpr DotChoice choose_dot(Planner const& p, int i, std::optional<NamedSharding> const& req) {
  GraphNode const& n = p.node(i);
  GraphNode const& L = p.node(n.children[0]);
  GraphNode const& R = p.node(n.children[1]);
  auto const& sl = p.natural_of(n.children[0]);
  auto const& sr = p.natural_of(n.children[1]);
  Mesh const& mesh = sl.mesh().num_devices() >= sr.mesh().num_devices() ? sl.mesh() : sr.mesh();
  auto axes_of = [&](NamedSharding const& s, std::size_t d) { return s.mesh() == mesh ? s.layout().dim_axes(d) : AxisList{}; };
  DotDims const& dd = n.dot;
  DotMapping const map = dot_mapping(dd, L.shape.size(), R.shape.size());
  auto const& lfree = map.lhs_free;
  auto const& rfree = map.rhs_free;

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
  // Then the same factors with the other operand's free factor first to keep a shared axis (the
  // contraction split as the lhs has it while the result keeps the rhs's columns: x[m,k] on
  // P('a', 'b') @ w[k,n] on P(None, 'a') gathers x's rows and all-reduces over 'b').
  std::vector<std::pair<Factors, bool>> candidates{{lhs_view, false}, {rhs_view, true}, {no_contract, false},
                                                   {lhs_view, true},  {rhs_view, false}, {no_contract, true}};
  if (req && req->mesh() == mesh) {
    Factors r;
    std::size_t d = 0;
    for (std::size_t b = 0; b < dd.lhs_batch.size(); ++b) r.batch.push_back(req->layout().dim_axes(d++));
    for (std::size_t k = 0; k < dd.lhs_contract.size(); ++k) r.contract.push_back({});
    for (std::size_t k = 0; k < lfree.size(); ++k) r.m.push_back(req->layout().dim_axes(d++));
    for (std::size_t k = 0; k < rfree.size(); ++k) r.n.push_back(req->layout().dim_axes(d++));
    candidates.push_back({r, false});
    // The request's free factors with a contraction kept as an operand splits it: the partial
    // results are sliced as the request wants before their all-reduce (which then combines less).
    Factors r_lhs = r, r_rhs = r;
    r_lhs.contract = lhs_view.contract;
    r_rhs.contract = rhs_view.contract;
    candidates.push_back({r_lhs, false});
    candidates.push_back({r_rhs, false});
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
      for (auto a : effective_axes(mesh.axes(), f.contract[k])) k_axes.push_back(a);
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
    c.cost = p.reshard_cost(n.children[0], c.lhs) + p.reshard_cost(n.children[1], c.rhs);
    double out_bytes = static_cast<double>(c.partial.block_shape(n.shape).num_elements() * n.dtype_bytes);
    // What each device computes: its GEMM by the kernel roofline. Priced by communication alone,
    // a candidate that gathers both operands and multiplies them whole on every device would beat
    // one that splits the multiply and all-reduces (Megatron's attention output projection).
    Shape const lb = c.lhs.block_shape(L.shape), rb = c.rhs.block_shape(R.shape);
    double n_block = 1;
    for (auto d : rfree) n_block *= static_cast<double>(rb[d]);
    double const flops = 2.0 * static_cast<double>(lb.num_elements()) * n_block;
    double const bytes = static_cast<double>(lb.num_elements() * L.dtype_bytes + rb.num_elements() * R.dtype_bytes) +
                         out_bytes;
    c.cost += p.model.kernel_us(flops, bytes);
    int group = group_size(mesh.axes(), k_axes);
    if (!k_axes.empty() && req && Planner::scatter_reaches(c.partial, k_axes, *req, n.shape.size())) {
      c.cost += p.model.reduce_scatter_us(out_bytes, group);
      c.after = *req;
    } else {
      c.cost += p.model.all_reduce_us(out_bytes, group);
      if (req) c.cost += p.model.reshard_us(decompose(n.shape, n.dtype_bytes, c.after, *req));
    }
    if (!best || c.cost < best->cost) best = c;
  }
  return *best;
}

class DotRules final : public OpRules {
 public:
  // 2 * batch * m * n * k, from the device's lhs and result blocks.
  constexpr StepWork work(GraphNode const& n, Step const&, StepBlocks const& b) const override {
    if (b.reads.size() != 2 || !b.made) return counting::none();
    GemmDims g = gemm_dims(n.dot, b.reads[0], *b.made);
    return {2.0 * static_cast<double>(g.batch * g.m * g.n) * static_cast<double>(g.k), g};
  }
  constexpr std::optional<NamedSharding> natural(Planner const& p, int i) const override {
    return choose_dot(p, i, std::nullopt).after;
  }
  constexpr void assign(Planner& p, int i, std::optional<NamedSharding> const& req) const override {
    GraphNode const& n = p.node(i);
    DotChoice d = choose_dot(p, i, req);
    for (int c : n.children) p.made_apart[static_cast<std::size_t>(c)] = 1;  // the GEMM reads tensors
    p.assign(n.children[0], d.lhs);
    p.assign(n.children[1], d.rhs);
    Planner::complete_partial(p.plan(i), d.partial, d.contract_axes, req, n.shape.size());
  }
  constexpr void region(Scheduler& s, int i, Region& r) const override { s.boundary(i, r); }
  constexpr void materialize(Scheduler& s, int i) const override {
    GraphNode const& n = s.node(i);
    for (int c : n.children) s.operand(c);
    auto const& sh = *s.at(i).partial;
    std::string blocks = std::is_constant_evaluated() ? std::string() : block_shapes_text(sh, n.shape);
    s.add(StepKind::kernel, i, sh.mesh().num_devices(),
          TESSEL_TEXT("gemm      dot_general -> {} {} on {} devices: {} per device, local result {}",
                      type_text(n), to_string(sh.spec()), sh.mesh().num_devices(),
                      gemm_text(s.node(n.children[0]), s.node(n.children[1]), n), blocks),
          {"gemm", s.user_op(i)}, {s.slot(n.children[0]), s.slot(n.children[1])});
    s.collective_steps(i, "dot_general contracting sharded dimensions");
    s.result_reshard(i);
  }
};


inline constexpr DotRules dot_rules{};

}  // namespace tessel::plan
