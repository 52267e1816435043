#pragma once
// Common values: the planner's CSE pass.
#include <string_view>

#include "tessel/plan/detail/planner.hpp"

namespace tessel::plan {

// Common subexpressions (XLA's CSE, on the planned graph): a node that computes what an earlier
// node computes (same op, shapes, attributes, the same tensors by GraphNode::alias, and the same
// plan all the way down) reuses that node's value. C++ scalars are the same by value
// (GraphNode::alias: the plan cache keys on which scalars are equal, so this holds for every call
// that runs the plan), one identity mechanism with the tensors'. Only tensors (their reshards)
// and boundaries are shared;
// duplicates inside a fused region cost arithmetic only (and softmax's is removed by the kernel's
// row cache).
constexpr std::vector<int> value_classes(Graph const& g) {
  std::size_t n = g.size();
  std::vector<int> canon(n);
  auto same_node = [&](std::size_t i, std::size_t j) {
    GraphNode const& a = g[i];
    GraphNode const& b = g[j];
    if (!same_attributes(a, b)) return false;
    for (std::size_t k = 0; k < a.children.size(); ++k)
      if (canon[static_cast<std::size_t>(a.children[k])] != canon[static_cast<std::size_t>(b.children[k])]) return false;
    return true;
  };
  // Each class's first node, found by a hash of what same_node compares (its op, shape and
  // attributes, its operands' classes) in an open-addressed table: linear in the graph, where
  // comparing every pair grew with its square (static_jit plans graphs of a thousand nodes in the
  // compiler, whose evaluation is slow).
  auto hash_of = [&](std::size_t i) {
    GraphNode const& a = g[i];
    std::uint64_t h = 1469598103934665603ull;
    auto mix = [&](std::uint64_t v) { h = (h ^ v) * 1099511628211ull; };
    mix(static_cast<std::uint64_t>(a.kind));
    for (char const* c = a.op; *c != 0; ++c) mix(static_cast<std::uint64_t>(*c));
    for (auto d : a.shape) mix(static_cast<std::uint64_t>(d));
    for (int c : a.children) mix(static_cast<std::uint64_t>(canon[static_cast<std::size_t>(c)]));
    for (auto x : a.axes) mix(x);
    mix(a.axis);
    return h;
  };
  std::vector<int> table(2 * n + 1, -1);
  std::vector<std::uint64_t> hashes(n);
  for (std::size_t i = 0; i < n; ++i) {
    GraphNode const& node = g[i];
    canon[i] = static_cast<int>(i);
    if (node.kind == NodeKind::tensor || node.kind == NodeKind::scalar) {
      auto a = static_cast<std::size_t>(node.alias >= 0 ? node.alias : static_cast<int>(i));
      if (same_attributes(node, g[a])) canon[i] = canon[a];
      continue;
    }
    hashes[i] = hash_of(i);
    std::size_t slot = static_cast<std::size_t>(hashes[i] % table.size());
    for (; table[slot] >= 0; slot = (slot + 1) % table.size()) {
      auto j = static_cast<std::size_t>(table[slot]);
      if (hashes[j] == hashes[i] && same_node(i, j)) {
        canon[i] = static_cast<int>(j);
        break;
      }
    }
    if (canon[i] == static_cast<int>(i)) table[slot] = static_cast<int>(i);
  }
  return canon;
}

constexpr void share_common_values(Graph const& g, std::vector<NodePlan>& plans) {
  std::vector<int> const canon = value_classes(g);
  // Same value and the same plan for every node of the two subtrees.
  auto same_plans = [&](auto& self, std::size_t i, std::size_t j) -> bool {
    if (!computes_alike(plans[i], plans[j])) return false;
    for (std::size_t k = 0; k < g[i].children.size(); ++k)
      if (!self(self, static_cast<std::size_t>(g[i].children[k]), static_cast<std::size_t>(g[j].children[k]))) return false;
    return true;
  };
  // Each class's members that make their own value, one per distinct plan: a node shares with the
  // first earlier one planned as it is. (Not only with the class's first node: x read as is by a
  // residual and resharded alike by q, k and v is gathered once, not three times.)
  std::vector<std::vector<std::size_t>> makers(g.size());
  for (std::size_t i = 0; i < g.size(); ++i) {
    GraphNode const& node = g[i];
    bool shareable = node.kind == NodeKind::tensor || node.kind == NodeKind::dot || node.kind == NodeKind::constraint ||
                     node.kind == NodeKind::concatenate || (node.kind == NodeKind::reduce && !plans[i].row_fused);
    if (!shareable || plans[i].reuses >= 0 || plans[i].keeps_own) continue;
    auto& class_makers = makers[static_cast<std::size_t>(canon[i])];
    for (std::size_t j : class_makers)
      if (same_plans(same_plans, i, j)) {
        plans[i].same_as = static_cast<int>(j);
        break;
      }
    if (plans[i].same_as < 0) class_makers.push_back(i);
  }
}

}  // namespace tessel::plan
