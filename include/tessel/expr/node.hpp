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

template <Element T>
struct TensorNode {
  using expr_concept = expression_tag;
  using value_type = T;
  static constexpr NodeKind kind = NodeKind::tensor;
  Tensor<T> tensor;
  [[nodiscard]] Shape const& shape() const { return tensor.shape(); }
};

// A C++ scalar: weakly typed (W is int or double), broadcast to any shape.
template <class W>
struct ScalarNode {
  using expr_concept = expression_tag;
  using value_type = Weak<W>;
  static constexpr NodeKind kind = NodeKind::scalar;
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
struct node_count;
template <class T>
struct node_count<TensorNode<T>> : std::integral_constant<int, 1> {};
template <class W>
struct node_count<ScalarNode<W>> : std::integral_constant<int, 1> {};
template <class Op, class C, class R, class... Ch>
struct node_count<ElementwiseNode<Op, C, R, Ch...>> : std::integral_constant<int, (1 + ... + node_count<Ch>::value)> {};
template <class Op, class Ch>
struct node_count<ReduceNode<Op, Ch>> : std::integral_constant<int, 1 + node_count<Ch>::value> {};
template <class Ch>
struct node_count<ConstraintNode<Ch>> : std::integral_constant<int, 1 + node_count<Ch>::value> {};

}  // namespace tessel
