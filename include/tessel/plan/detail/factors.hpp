#pragma once
// Sharding rules stated as factors, as Shardy's OpShardingRule states them: every dimension of each
// operand and of the result is one factor of the op's iteration space, and a factor that is on the
// operands but not on the result is reduced (a contraction: sharding it leaves partial sums). An op
// declares its rule (which dimension is which factor) and the candidates worth pricing (the axes
// each factor takes, and the order in which factors claim them); the generic code here resolves a
// candidate into shardings and prices it by the cost model: the operands' reshards, the kernel's
// roofline (from the op's declared work, OpRules::work), the collective completing the partial
// sums, and the reshard to a requested result. dot_general is the first op stated so
// (rules/dot.hpp).
#include <algorithm>
#include <optional>
#include <vector>

#include "tessel/plan/detail/planner.hpp"

namespace tessel::plan {

struct FactorRule {
  // For each operand, the factor of each of its dimensions; the factor of each result dimension.
  std::vector<std::vector<int>> operand_factors;
  std::vector<int> result_factors;
  int factors = 0;
};

// The mesh axes each factor takes, claimed in `order` (each axis serves the first factor that
// claims it; the others drop it).
struct FactorCandidate {
  std::vector<AxisList> axes;
  std::vector<int> order;
};

// A candidate resolved and priced: each operand's sharding, the result's before its collective
// (partial sums over `reduced_axes` when a reduced factor is sharded) and after it, and the cost.
struct FactorChoice {
  std::vector<NamedSharding> operands;
  NamedSharding partial, after;
  AxisList reduced_axes;
  double cost = 0;
};

// The shardings a candidate gives (its cost not yet priced).
constexpr FactorChoice resolve_factors(Mesh const& mesh, FactorRule const& rule, FactorCandidate c) {
  AxisList used;
  for (int f : c.order) {
    AxisList kept;
    for (auto a : c.axes[static_cast<std::size_t>(f)])
      if (std::find(used.begin(), used.end(), a) == used.end()) {
        kept.push_back(a);
        used.push_back(a);
      }
    c.axes[static_cast<std::size_t>(f)] = kept;
  }
  auto sharding = [&](std::vector<int> const& dims) {
    DimAxes axes;
    for (int f : dims) axes.push_back(c.axes[static_cast<std::size_t>(f)]);
    return sharding_from_axes(mesh, axes);
  };
  FactorChoice choice{{}, sharding(rule.result_factors), sharding(rule.result_factors), {}, 0};
  for (auto const& dims : rule.operand_factors) choice.operands.push_back(sharding(dims));
  for (int f = 0; f < rule.factors; ++f)
    if (std::find(rule.result_factors.begin(), rule.result_factors.end(), f) == rule.result_factors.end())
      for (auto a : effective_axes(mesh.axes(), c.axes[static_cast<std::size_t>(f)])) choice.reduced_axes.push_back(a);
  return choice;
}

// What a resolved candidate for node i costs: its operands' reshards, each device's kernel (its
// op's work by the kernel roofline: priced by communication alone, a candidate that gathers both
// operands and multiplies them whole on every device would beat one that splits the work and
// all-reduces), and the collective completing reduced factors, a reduce-scatter when it can reach
// the requested result, else an all-reduce and the reshard to the request.
constexpr FactorChoice price_factors(Planner const& p, int i, FactorChoice c, std::optional<NamedSharding> const& req) {
  GraphNode const& n = p.node(i);
  StepBlocks blocks;
  double bytes = 0;
  for (std::size_t k = 0; k < c.operands.size(); ++k) {
    int const child = n.children[k];
    c.cost += p.reshard_cost(child, c.operands[k]);
    Shape const& block = blocks.reads.emplace_back(c.operands[k].block_shape(p.node(child).shape));
    bytes += static_cast<double>(block.num_elements() * static_cast<std::int64_t>(p.node(child).dtype_bytes));
  }
  blocks.made = c.partial.block_shape(n.shape);
  // Reduced factors leave partial values (a 16-bit dot's in float32: partial_bytes).
  std::size_t const element_bytes = c.reduced_axes.empty() ? n.dtype_bytes : partial_bytes(n);
  double const out_bytes = static_cast<double>(blocks.made->num_elements()) * static_cast<double>(element_bytes);
  c.cost += p.model.kernel_us(rules_for(n.kind).work(n, Step{}, blocks).flops, bytes + out_bytes);
  int const group = group_size(c.partial.mesh().axes(), c.reduced_axes);
  if (!c.reduced_axes.empty() && req && Planner::scatter_reaches(c.partial, c.reduced_axes, *req, n.shape.size())) {
    c.cost += p.model.reduce_scatter_us(out_bytes, group);
    c.after = *req;
  } else {
    c.cost += p.model.all_reduce_us(out_bytes, group);
    if (req) c.cost += p.model.reshard_us(decompose(n.shape, n.dtype_bytes, c.after, *req));
  }
  return c;
}

// The cheapest of the candidates (ties to the earlier).
constexpr FactorChoice choose_by_factors(Planner const& p, int i, Mesh const& mesh, FactorRule const& rule,
                                         std::vector<FactorCandidate> const& candidates,
                                         std::optional<NamedSharding> const& req) {
  std::optional<FactorChoice> best;
  for (auto const& c : candidates) {
    FactorChoice priced = price_factors(p, i, resolve_factors(mesh, rule, c), req);
    if (!best || priced.cost < best->cost) best = std::move(priced);
  }
  return *best;
}

}  // namespace tessel::plan
