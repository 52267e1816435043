#pragma once
// The planner's view of an expression: a flat list of nodes in post-order (children before
// parents, the root last), with shapes, dtypes and the shardings the user fixed. Built from the
// expression type once per plan-cache miss; everything after works on values, not types.
#include <cstddef>
#include <optional>
#include <tuple>
#include <string_view>
#include <utility>
#include <vector>

#include "tessel/core/named_sharding.hpp"
#include "tessel/core/reduce_op.hpp"
#include "tessel/core/shape.hpp"
#include "tessel/expr/concatenate.hpp"
#include "tessel/expr/dot.hpp"
#include "tessel/expr/view.hpp"
#include "tessel/expr/manual_collective.hpp"
#include "tessel/expr/node.hpp"

namespace tessel::plan {

struct GraphNode {
  NodeKind kind;
  char const* op;           // "add", "sum", "tensor", "scalar", "constraint", ...
  char const* dtype;        // "float32", ..., "bool"
  std::size_t dtype_bytes;
  Shape shape;
  std::vector<int> children{};
  std::optional<NamedSharding> sharding{};     // tensor: its sharding; constraint: the one required
  FixedVector<std::uint8_t, max_rank> axes{};  // reduce, arg_reduce; dynamic_(update_)slice: the starts' dims
  bool keepdims = false;                       // reduce
  ReduceOp combine = ReduceOp::sum;            // reduce: how its values combine (ops tag's combiner)
  bool divides = false;                        // reduce: a mean (the sum is divided by the count)
  DotDims dot{};                               // dot
  ViewSpec view{};                             // view
  std::uint8_t axis = 0;                       // concatenate, cumsum, take, top_k
  bool indices = false;                        // top_k: this node is the indices (else the values)
  // tensor: the graph index of the first tensor node holding the same tensor (its own index when
  // none does), for the first max_aliased_leaves distinct tensors; scalar: likewise, of the first
  // scalar with the same value. The plan cache keys on the same pattern (cache.hpp), so a plan's
  // common subexpressions hold for every call that hits it.
  int alias = -1;
  // Mesh axes along which the value may differ between devices (inside shard_map; TensorImpl::
  // varying): a tensor's own, an explicit collective's (manual_varying), else its operands' union.
  std::uint32_t varying = 0;
  ManualCollectiveSpec manual{};  // manual_collective
};

inline constexpr int max_aliased_leaves = 32;

// Whether two C strings (op and dtype names) are the same text: a plain loop, which a compiler
// evaluates far faster than std::string_view's comparison (static_jit plans in the compiler).
constexpr bool same_text(char const* a, char const* b) {
  while (*a != 0 && *a == *b) ++a, ++b;
  return *a == *b;
}

// The bytes of one of node n's partial values before its all-reduce or reduce-scatter: a 16-bit
// float dot keeps its partial sums in float32 through the collective and is rounded once after
// (kernels/dot.cpp), so it moves and holds 4 bytes per element; any other node its dtype's.
constexpr std::size_t partial_bytes(GraphNode const& n) {
  bool const half = same_text(n.dtype, "bfloat16") || same_text(n.dtype, "float16");
  return n.kind == NodeKind::dot && half ? 4 : n.dtype_bytes;
}

// Whether two nodes are the same op with the same attributes and result (their operands aside):
// what CSE and the run-time row cache both ask. The cheap fields first.
constexpr bool same_attributes(GraphNode const& a, GraphNode const& b) {
  return a.kind == b.kind && a.children.size() == b.children.size() && a.shape == b.shape && same_text(a.op, b.op) &&
         same_text(a.dtype, b.dtype) && a.keepdims == b.keepdims && a.axis == b.axis && a.indices == b.indices && a.axes == b.axes &&
         a.view == b.view && a.dot.lhs_contract == b.dot.lhs_contract && a.dot.rhs_contract == b.dot.rhs_contract &&
         a.dot.lhs_batch == b.dot.lhs_batch && a.dot.rhs_batch == b.dot.rhs_batch && a.sharding == b.sharding &&
         a.manual == b.manual;
}

using Graph = std::vector<GraphNode>;

template <class T>
constexpr char const* dtype_name() {
  if constexpr (std::same_as<T, bool>) return "bool";
  else if constexpr (Element<T>) return name(dtype_of<T>).data();  // (string literals: terminated)
  else return "weak";
}

// Tensor leaves and C++ scalars seen so far (for GraphNode::alias and the plan cache's key): each
// distinct tensor (up to max_aliased_leaves of them) with where it first appeared, however often
// it appears (a tree repeats a shared subexpression's leaves at every use: a transformer layer's
// dozen weights appear hundreds of times). A scalar's identity is its value (its bits as a double,
// and whether it is an integer): the key holds only which scalars are equal, not their values, so a
// plan serves every call whose equal scalars are the same ones, and CSE may share what equal
// scalars compute.
struct LeafIdentities {
  void const* impl[max_aliased_leaves]{};
  int node[max_aliased_leaves]{};
  int count = 0;        // distinct tensors kept
  int occurrences = 0;  // tensor leaves seen (the plan cache's key numbers them so)
  std::uint64_t scalar_bits[max_aliased_leaves]{};
  bool scalar_integral[max_aliased_leaves]{};
  int scalar_node[max_aliased_leaves]{};
  int scalar_count = 0;        // distinct scalar values kept
  int scalar_occurrences = 0;  // scalars seen
  // Where the first scalar with this value appeared, or `self` (remembered when there is room).
  constexpr int scalar_alias(std::uint64_t bits, bool integral, int self) {
    for (int k = 0; k < scalar_count; ++k)
      if (scalar_bits[k] == bits && scalar_integral[k] == integral) return scalar_node[k];
    if (scalar_count < max_aliased_leaves) {
      scalar_bits[scalar_count] = bits;
      scalar_integral[scalar_count] = integral;
      scalar_node[scalar_count++] = self;
    }
    return self;
  }
  // Where this tensor first appeared, or `self` (remembered when there is room).
  constexpr int alias(void const* p, int self) {
    for (int k = 0; k < count; ++k)
      if (impl[k] == p) return node[k];
    if (count < max_aliased_leaves) {
      impl[count] = p;
      node[count++] = self;
    }
    return self;
  }
};

// What an op tag's describe() sees of the graph being built: the leaf identities, answering for
// the node about to be appended.
struct DescribeLeaves {
  LeafIdentities& leaves;
  int self;
  constexpr int alias(void const* p) { return leaves.alias(p, self); }
  constexpr int scalar(std::uint64_t bits, bool integral) { return leaves.scalar_alias(bits, integral, self); }
};

// Appends e's subtree to g in post-order and returns e's index: the children, then the node with
// what its tag records (Tag::describe). One instantiation level per nesting level (node.hpp,
// arity).
template <class E>
constexpr int describe(E const& e, Graph& g, LeafIdentities& leaves) {
  using V = expr_value_t<E>;
  using Tag = typename E::tag;
  GraphNode n{E::kind, Tag::name(e.data), dtype_name<V>(), std::is_arithmetic_v<V> || Element<V> ? sizeof(V) : 0,
              Shape(e.shape())};
#define TESSEL_STEP(K) n.children.push_back(describe(std::get<K>(e.children), g, leaves))
  TESSEL_FOR_EACH_CHILD(E, TESSEL_STEP)
#undef TESSEL_STEP
  for (int c : n.children) n.varying |= g[static_cast<std::size_t>(c)].varying;
  DescribeLeaves ctx{leaves, static_cast<int>(g.size())};
  Tag::describe(e.data, n, ctx);
  g.push_back(n);
  return static_cast<int>(g.size()) - 1;
}

template <class E>
constexpr int describe(E const& e, Graph& g) {
  LeafIdentities leaves;
  return describe(e, g, leaves);
}

}  // namespace tessel::plan
