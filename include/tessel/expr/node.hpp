#pragma once
// Expression nodes are plain data: children held by value (tensors are shared handles, so this
// copies no data and cannot dangle), an op tag, and the shape checked when the node is built.
// Nothing here allocates or launches; the planner decides shardings, collectives and fusion.
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "tessel/core/named_sharding.hpp"
#include "tessel/core/shape.hpp"
#include "tessel/expr/concept.hpp"
#include "tessel/expr/promote.hpp"
#include "tessel/runtime/tensor.hpp"

namespace tessel {

enum class NodeKind : std::uint8_t { tensor, scalar, elementwise, reduce, constraint, dot, view, concatenate };

// Every node type records its subtree's node count and depth (the longest path from it to a leaf,
// in nodes) in a member alias, `subtree`. A member alias's arguments are worked out when the class
// is instantiated, and an expression's types are instantiated bottom-up as it is built, so each
// figure costs one step from its children's and no pass recurses through a deep type to find it.
namespace detail {
template <int Nodes, int Depth>
struct Subtree {
  static constexpr int nodes = Nodes, depth = Depth;
};
using Leaf = Subtree<1, 1>;
template <class... Children>
inline constexpr int max_depth = [] {
  int d = 0;
  ((d = Children::subtree::depth > d ? Children::subtree::depth : d), ...);
  return d;
}();
template <class... Children>
using subtree_of = Subtree<(1 + ... + Children::subtree::nodes), 1 + max_depth<Children...>>;
}  // namespace detail

template <Element T>
struct TensorNode {
  using expr_concept = expression_tag;
  using value_type = T;
  static constexpr NodeKind kind = NodeKind::tensor;
  using subtree = detail::Leaf;
  Tensor<T> tensor;
  [[nodiscard]] Shape const& shape() const { return tensor.shape(); }
};

// A C++ scalar: weakly typed (W is int or double), broadcast to any shape.
template <class W>
struct ScalarNode {
  using expr_concept = expression_tag;
  using value_type = Weak<W>;
  static constexpr NodeKind kind = NodeKind::scalar;
  using subtree = detail::Leaf;
  W value;
  [[nodiscard]] Shape shape() const { return {}; }
};

// An elementwise op over broadcast children; Compute is the promoted type children are converted
// to, Result what the op yields (bool for comparisons).
template <class Op, class Compute, class Result, class... Children>
struct ElementwiseNode {
  using expr_concept = expression_tag;
  using value_type = Result;
  using compute_type = Compute;
  using op = Op;
  static constexpr NodeKind kind = NodeKind::elementwise;
  using subtree = detail::subtree_of<Children...>;
  static_assert(sizeof...(Children) >= 1 && sizeof...(Children) <= 3, "tessel: elementwise ops take one to three operands");
  std::tuple<Children...> children;
  Shape shape_;
  [[nodiscard]] Shape const& shape() const { return shape_; }
};

// A reduction over `axes` (sorted, distinct) of its child.
template <class Op, class Child>
struct ReduceNode {
  using expr_concept = expression_tag;
  using value_type = expr_value_t<Child>;
  using op = Op;
  static constexpr NodeKind kind = NodeKind::reduce;
  using subtree = detail::subtree_of<Child>;
  Child child;
  FixedVector<std::uint8_t, max_rank> axes;
  bool keepdims;
  Shape shape_;
  [[nodiscard]] Shape const& shape() const { return shape_; }
};

// with_sharding_constraint: the child's value must have this sharding.
template <class Child>
struct ConstraintNode {
  using expr_concept = expression_tag;
  using value_type = expr_value_t<Child>;
  static constexpr NodeKind kind = NodeKind::constraint;
  using subtree = detail::subtree_of<Child>;
  Child child;
  NamedSharding sharding;
  [[nodiscard]] Shape const& shape() const { return child.shape(); }
};

template <class T>
inline constexpr bool is_tensor_v = false;
template <class T>
inline constexpr bool is_tensor_v<Tensor<T>> = true;

// Anything an op accepts: an expression, a tensor, or a C++ arithmetic scalar.
template <class X>
concept Operand = Expression<X> || is_tensor_v<std::remove_cvref_t<X>> ||
                  (std::is_arithmetic_v<std::remove_cvref_t<X>> && !std::same_as<std::remove_cvref_t<X>, bool>);

namespace detail {
[[noreturn]] void throw_scalar_out_of_range(long double value);
}

template <Operand X>
auto as_node(X const& x) {
  using D = std::remove_cvref_t<X>;
  if constexpr (Expression<D>) return x;
  else if constexpr (is_tensor_v<D>) return TensorNode<typename D::value_type>{x};
  else if constexpr (std::is_floating_point_v<D>) return ScalarNode<double>{static_cast<double>(x)};
  else {
    // A weak integer is an int32 in the computation, as a Python int is in JAX (which refuses
    // one that does not fit with an OverflowError); never a silent wrap.
    if (!std::in_range<int>(x)) detail::throw_scalar_out_of_range(static_cast<long double>(x));
    return ScalarNode<int>{static_cast<int>(x)};
  }
}

template <class X>
using node_t = decltype(as_node(std::declval<X const&>()));

// Nodes in a subtree: fixes each node's post-order number from its type alone, so the planner's
// per-node decisions are found again by position without any look-up.
template <class E>
struct node_count : std::integral_constant<int, E::subtree::nodes> {};

// Nesting depth of an expression: a leaf is 1, a node one more than its deepest operand.
template <class E>
struct expression_depth : std::integral_constant<int, E::subtree::depth> {};

// The deepest expression tessel evaluates. Passes over an expression type (plan-cache signature,
// graph building, the executor, the fused kernel's evaluator) recurse through it, and compilers
// bound template recursion (-ftemplate-depth: 900 in GCC, 1024 in Clang, by default). Each level of
// nesting costs those passes one level of instantiation (elementwise ops and row-fused
// reductions), two (constraints, views, reductions computed apart) or three (concatenate), so 256
// levels of any mix stay under GCC's default (a chain of 255 concatenates needs 772). A deeper
// expression is a compile error naming this limit (check_depth below) instead of a template-depth
// error: evaluate part of it first (eval(), or a jit boundary), which also bounds compile time.
inline constexpr int max_expression_depth = 256;  // check_depth's message repeats the figure

namespace detail {
// Instantiated by every entry point that evaluates or plans an expression; the error names the
// expression's depth (Depth) and the limit.
template <int Depth, int Limit = max_expression_depth>
struct check_depth {
  static_assert(Depth <= Limit,
                "tessel: an expression may be at most max_expression_depth = 256 levels deep (its depth is "
                "the first argument of check_depth<depth, limit>); split it with eval() or a jit boundary");
  static constexpr bool ok = Depth <= Limit;
};
template <class E>
inline constexpr bool depth_ok = check_depth<E::subtree::depth>::ok;

// Elementwise nodes have one to three children; passes over deep expressions reach them with
// `if constexpr` ladders on the arity (no helper template or generic lambda between a node and
// its children), so each level of nesting costs one level of template instantiation.
template <class E>
inline constexpr std::size_t arity = std::tuple_size_v<decltype(E::children)>;
template <std::size_t K, class E>
using child_t = std::tuple_element_t<K, decltype(E::children)>;
// Post-order offset of child K's subtree within its parent's.
template <class E, std::size_t K>
inline constexpr int child_offset = [] {
  if constexpr (K == 0) return 0;
  else return child_offset<E, K - 1> + child_t<K - 1, E>::subtree::nodes;
}();
}  // namespace detail

}  // namespace tessel
