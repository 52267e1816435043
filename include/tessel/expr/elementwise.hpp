#pragma once
// Elementwise ops, with NumPy broadcasting and JAX's type promotion. Each call builds one node.
#include <concepts>
#include <format>
#include <type_traits>
#include <utility>

#include "tessel/core/error.hpp"

#include "tessel/expr/checks.hpp"
#include "tessel/expr/node.hpp"
#include "tessel/expr/ops.hpp"

namespace tessel {

namespace detail {

template <class T>
inline constexpr bool is_weak_v = false;
template <class W>
inline constexpr bool is_weak_v<Weak<W>> = true;

// How an op's compute and result types follow from its operands'.
enum class Typing { arithmetic, comparison, floating, select };

// The promoted type of an op's operands: all of them, but a select's condition takes no part.
template <Typing typing, class First, class... Rest>
struct promoted_operands {
  using type = promote_t<expr_value_t<First>, expr_value_t<Rest>...>;
};
template <class Cond, class... Rest>
struct promoted_operands<Typing::select, Cond, Rest...> {
  using type = promote_t<expr_value_t<Rest>...>;
};

template <class Op, Typing typing, class... Nodes>
constexpr auto make_node_of(Nodes const&... nodes) {
  using Promoted = typename promoted_operands<typing, Nodes...>::type;
  static_assert(!is_weak_v<Promoted>, "tessel: an expression needs at least one tensor operand");
  static_assert(!std::same_as<Promoted, NeedsInt16>,
                "tessel: int8 with uint8 promotes to int16 (jnp.promote_types), which tessel does not store; "
                "astype<std::int32_t>() one operand first");
  // (maximum and minimum of bools are or and and, as in JAX.)
  static_assert(!std::same_as<Promoted, bool> || typing == Typing::comparison || typing == Typing::select ||
                    std::same_as<Op, ops::maximum> || std::same_as<Op, ops::minimum>,
                "tessel: no arithmetic between bool operands (comparisons, masks); use where(cond, a, b) or "
                "astype<std::int32_t>()");
  // The result's type, and the type its kernel computes in (float for 16-bit floats, whose every
  // op rounds its result: kernel_eval.hpp's RoundedTo).
  using Value = std::conditional_t<typing == Typing::floating, float_of_t<Promoted>, Promoted>;
  using Compute = compute_t<Value>;
  using Result = std::conditional_t<typing == Typing::comparison, bool, Value>;
  Shape shape;
  Mesh const* mesh = nullptr;
  StaticErrors* errors = errors_of(nodes...);
  ((shape = broadcast_shapes(Op::name, shape, nodes.shape(), errors), check_same_devices(Op::name, mesh, mesh_of(nodes)),
    mesh = mesh ? mesh : mesh_of(nodes)),
   ...);
  return ElementwiseNode<Op, Compute, Result, Nodes...>{{nodes...}, {shape}};
}

// A C++ scalar in a 16-bit float expression is rounded to that type first, as JAX rounds a weak
// Python scalar (x_bf16 * 0.1 multiplies by bfloat16(0.1)).
template <class V, class N>
constexpr auto rounded_scalar(N const& n) {
  if constexpr (N::kind == NodeKind::scalar) {
    using W = std::remove_cvref_t<decltype(n.data.value)>;
    return ElementwiseNode<ops::convert<V>, W, V, N>{{n}, {n.shape()}};
  } else {
    return n;
  }
}

template <class Op, Typing typing, class... Nodes>
constexpr auto make_node(Nodes const&... nodes) {
  using Promoted = typename promoted_operands<typing, Nodes...>::type;
  if constexpr (HalfFloat<Promoted> && ((Nodes::kind == NodeKind::scalar) || ...)) {
    return make_node<Op, typing>(rounded_scalar<Promoted>(nodes)...);
  } else {
    return make_node_of<Op, typing>(nodes...);
  }
}

template <class A, class B>
concept BinaryOperands = Operand<A> && Operand<B> && (!std::is_arithmetic_v<std::remove_cvref_t<A>> ||
                                                      !std::is_arithmetic_v<std::remove_cvref_t<B>>);

}  // namespace detail

#define TESSEL_BINARY_FUNCTION(fn, Op, typing)                                       \
  template <class A, class B>                                                        \
    requires detail::BinaryOperands<A, B>                                            \
  constexpr auto fn(A const& a, B const& b) {                                                  \
    return detail::make_node<ops::Op, detail::Typing::typing>(as_node(a), as_node(b)); \
  }

TESSEL_BINARY_FUNCTION(operator+, add, arithmetic)
TESSEL_BINARY_FUNCTION(operator-, sub, arithmetic)
TESSEL_BINARY_FUNCTION(operator*, mul, arithmetic)
// `/` is true division, as in Python 3 and jnp.true_divide: int32 / int32 is float32.
TESSEL_BINARY_FUNCTION(operator/, div, floating)
TESSEL_BINARY_FUNCTION(true_divide, div, floating)

namespace detail {
template <class A, class B>
concept HalfByScalar = !std::is_arithmetic_v<std::remove_cvref_t<A>> && std::is_arithmetic_v<std::remove_cvref_t<B>> &&
                       HalfFloat<expr_value_t<node_t<A>>>;
}  // namespace detail
// A 16-bit float divided by a reduction (x / sum(x, axis, true), broadcast): XLA multiplies by the
// reciprocal, taken at the reduction's shape: rounded to float16 for float16, kept in float32
// for bfloat16.
template <class A, class B>
  requires detail::BinaryOperands<A, B> && (!std::is_arithmetic_v<std::remove_cvref_t<A>>) &&
           (!std::is_arithmetic_v<std::remove_cvref_t<B>>) && HalfFloat<expr_value_t<node_t<A>>> &&
           std::same_as<expr_value_t<node_t<A>>, expr_value_t<node_t<B>>> && (node_t<B>::kind == NodeKind::reduce)
constexpr auto operator/(A const& a, B const& b) {
  using V = expr_value_t<node_t<A>>;
  if constexpr (std::same_as<V, float16>) return a * (1.0f / b);
  else return astype<V>(a * (1.0f / astype<float>(b)));
}

// A 16-bit float divided by a C++ scalar multiplies by its reciprocal, as XLA rewrites x / c:
// 1/c rounded to float16 for float16, kept in float32 for bfloat16.
template <class A, class B>
  requires detail::BinaryOperands<A, B> && detail::HalfByScalar<A, B>
constexpr auto operator/(A const& a, B const& b) {
  using V = expr_value_t<node_t<A>>;
  double const reciprocal = static_cast<double>(1.0f / static_cast<float>(V(static_cast<float>(b))));
  if constexpr (std::same_as<V, float16>) return a * reciprocal;
  else return detail::make_node_of<ops::mul, detail::Typing::arithmetic>(as_node(a), as_node(reciprocal));
}
// `//` and `%` of Python (jnp.floor_divide, jnp.remainder): rounding toward -inf, the sign of the
// divisor; integer division by zero gives JAX's values (expr/xla_scalar.hpp), never a trap.
TESSEL_BINARY_FUNCTION(floor_divide, floor_divide, arithmetic)
TESSEL_BINARY_FUNCTION(remainder, remainder, arithmetic)
TESSEL_BINARY_FUNCTION(operator%, remainder, arithmetic)
TESSEL_BINARY_FUNCTION(minimum, minimum, arithmetic)
TESSEL_BINARY_FUNCTION(maximum, maximum, arithmetic)
TESSEL_BINARY_FUNCTION(operator<, lt, comparison)
TESSEL_BINARY_FUNCTION(operator<=, le, comparison)
TESSEL_BINARY_FUNCTION(operator>, gt, comparison)
TESSEL_BINARY_FUNCTION(operator>=, ge, comparison)
TESSEL_BINARY_FUNCTION(equal, eq, comparison)
TESSEL_BINARY_FUNCTION(not_equal, ne, comparison)
// `a == b` and `a != b` compare elementwise (a mask), as on jax.Arrays; never tensor identity.
TESSEL_BINARY_FUNCTION(operator==, eq, comparison)
TESSEL_BINARY_FUNCTION(operator!=, ne, comparison)

// lax.div and lax.rem: C's truncating division, with XLA's results for x / 0 (-1), x rem 0 (x)
// and INT_MIN / -1 (INT_MIN).
namespace lax {
TESSEL_BINARY_FUNCTION(div, lax_div, arithmetic)
TESSEL_BINARY_FUNCTION(rem, lax_rem, arithmetic)
}  // namespace lax
#undef TESSEL_BINARY_FUNCTION

// jnp.power. A C++ integer exponent is lax.integer_pow (repeated multiplication, as jnp.power
// does for a concrete integer); integer bases with integer exponents stay integers.
template <class A, class B>
  requires detail::BinaryOperands<A, B>
constexpr auto pow(A const& a, B const& b) {
  using BD = std::remove_cvref_t<B>;
  if constexpr (std::is_integral_v<BD>) {
    using Base = expr_value_t<node_t<A>>;
    if (std::integral<Base> && std::cmp_less(b, 0))
      throw Error(std::format("pow: integers cannot be raised to negative powers, got exponent {}", b));
    return detail::make_node<ops::integer_pow, detail::Typing::arithmetic>(as_node(a), as_node(b));
  } else {
    return detail::make_node<ops::pow, detail::Typing::arithmetic>(as_node(a), as_node(b));
  }
}

#define TESSEL_UNARY_FUNCTION(fn, Op, typing)                                        \
  template <class X>                                                                 \
    requires(Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>)           \
  constexpr auto fn(X const& x) {                                                              \
    return detail::make_node<ops::Op, detail::Typing::typing>(as_node(x));           \
  }

TESSEL_UNARY_FUNCTION(operator-, neg, arithmetic)
TESSEL_UNARY_FUNCTION(abs, abs, arithmetic)
TESSEL_UNARY_FUNCTION(relu, relu, arithmetic)
TESSEL_UNARY_FUNCTION(exp, exp, floating)
TESSEL_UNARY_FUNCTION(log, log, floating)
TESSEL_UNARY_FUNCTION(tanh, tanh, floating)
TESSEL_UNARY_FUNCTION(sqrt, sqrt, floating)
TESSEL_UNARY_FUNCTION(rsqrt, rsqrt, floating)
TESSEL_UNARY_FUNCTION(sin, sin, floating)
TESSEL_UNARY_FUNCTION(cos, cos, floating)
TESSEL_UNARY_FUNCTION(erf, erf, floating)
TESSEL_UNARY_FUNCTION(sigmoid, sigmoid, floating)
TESSEL_UNARY_FUNCTION(gelu, gelu, floating)
TESSEL_UNARY_FUNCTION(sign, sign, arithmetic)
TESSEL_UNARY_FUNCTION(floor, floor, arithmetic)
TESSEL_UNARY_FUNCTION(ceil, ceil, arithmetic)
TESSEL_UNARY_FUNCTION(round, round, arithmetic)
TESSEL_UNARY_FUNCTION(square, square, arithmetic)
#undef TESSEL_UNARY_FUNCTION

namespace detail {
// exp(x - max(x)) in softmax and its kin: the argument is never positive.
template <class X>
constexpr auto exp_of_shifted(X const& shifted) {
  return make_node<ops::exp_nonpositive, Typing::floating>(as_node(shifted));
}
}  // namespace detail

// jnp.where(cond, a, b): cond must be a comparison (bool) expression.
template <Operand C, Operand A, Operand B>
  requires std::same_as<expr_value_t<node_t<C>>, bool>
constexpr auto where(C const& cond, A const& a, B const& b) {
  return detail::make_node<ops::select, detail::Typing::select>(as_node(cond), as_node(a), as_node(b));
}

// x.astype(To)
template <Element To, class X>
  requires(Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>)
constexpr auto astype(X const& x) {
  using N = node_t<X>;
  auto n = as_node(x);
  if constexpr (std::same_as<To, bool> && HalfFloat<expr_value_t<N>>) {
    // XLA compares a 16-bit float with 0 in its own type: subnormals are true (a float32 or
    // float64 one, under XLA:CPU's denormals-are-zero, is false: xla::convert).
    return not_equal(x, 0);
  } else {
    return ElementwiseNode<ops::convert<To>, compute_t<expr_value_t<N>>, To, N>{{n}, {n.shape()}};
  }
}

}  // namespace tessel
