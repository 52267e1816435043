#pragma once
// The scalar function a fused kernel runs for a node: the op itself, or for a 16-bit float result
// the op computed in float and rounded after it, as XLA:CPU rounds after every op
// (tests/data/jax_half/README.md), inside fused loops too.
#include <concepts>

#include "tessel/core/dtype.hpp"
#include "tessel/core/half.hpp"
#include "tessel/expr/node.hpp"
#include "tessel/expr/ops.hpp"

namespace tessel::detail {

// An op whose result is a 16-bit float: computed in float, rounded to R, handed on as a float.
// XLA:CPU rounds after every op this way (tests/data/jax_half/README.md), inside fused loops too.
template <class Op, class R>
struct RoundedTo {
  template <class... Args>
  KOKKOS_FORCEINLINE_FUNCTION static float apply(Args... args) {
    return round_through<R>(Op::apply(args...));
  }
};
// The op a kernel runs for a node of op Op and result type R (conversions round by themselves).
template <class Op, class R>
struct kernel_op {
  using type = Op;
};
template <class Op, HalfFloat R>
struct kernel_op<Op, R> {
  using type = RoundedTo<Op, R>;
};
template <class To, HalfFloat R>
struct kernel_op<ops::convert<To>, R> {
  using type = ops::convert<To>;
};
// jax.nn.sigmoid and jax.nn.gelu are compositions of primitive ops in JAX, and each of those rounds
// on a 16-bit float: neg, exp, 1 +, 1 / (sigmoid); x*x, *x, *c1, x +, *c2, tanh, 1 +, *0.5, x *
// (gelu, its constants rounded to R first, as weak scalars are).
template <HalfFloat R>
struct kernel_op<ops::sigmoid, R> {
  struct type {
    KOKKOS_FORCEINLINE_FUNCTION static float apply(float x) {
      auto r = [](float v) { return round_through<R>(v); };
      return r(1.0f / r(1.0f + r(math::exp(-x))));
    }
  };
};
template <HalfFloat R>
struct kernel_op<ops::gelu, R> {
  struct type {
    KOKKOS_FORCEINLINE_FUNCTION static float apply(float x) {
      auto r = [](float v) { return round_through<R>(v); };
      constexpr float c1 = static_cast<float>(R(0.044715f)), c2 = static_cast<float>(R(0.7978845608028654f));
      float const x3 = r(r(x * x) * x);
      float const t = r(math::tanh(r(c2 * r(x + r(c1 * x3)))));
      return r(x * r(r(1.0f + t) * 0.5f));
    }
  };
};
template <class Op, class R>
using kernel_op_t = typename kernel_op<Op, R>::type;

// Ops whose result is one of their operands, or its sign changed: on operands that are values of a
// 16-bit R already, the result is one too and rounding it changes no bit (a NaN keeps its sign and
// becomes R's NaN at the next rounding or store, as it would here). A kernel skips that rounding:
// a rotary embedding's where over its two halves, a max of rounded values.
template <class Op>
inline constexpr bool picks_operand = std::same_as<Op, ops::select> || std::same_as<Op, ops::neg> ||
                                      std::same_as<Op, ops::abs> || std::same_as<Op, ops::relu> ||
                                      std::same_as<Op, ops::maximum> || std::same_as<Op, ops::minimum>;

// Whether every operand value of a node is a value of R: a tensor, reduction or op result of type
// R (each rounds to R), never a C++ scalar (held wider; a 16-bit expression converts it to R
// first, expr/elementwise.hpp). A select's condition is bool and takes no part.
template <class R, class... Ch>
inline constexpr bool operands_in_v =
    ((std::same_as<expr_value_t<Ch>, bool> || (std::same_as<expr_value_t<Ch>, R> && Ch::kind != NodeKind::scalar)) && ...);

// The op a kernel runs for an elementwise node of op Op, result type R and operands Ch.
template <class Op, class R, class... Ch>
using node_op_t = std::conditional_t<HalfFloat<R> && picks_operand<Op> && operands_in_v<R, Ch...>, Op, kernel_op_t<Op, R>>;

}  // namespace tessel::detail
