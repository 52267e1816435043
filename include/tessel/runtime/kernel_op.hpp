#pragma once
// The scalar function a fused kernel runs for a node: the op itself, or for a 16-bit float result
// the op computed in float and rounded after it, as XLA:CPU rounds after every op
// (tests/data/jax_half/README.md), inside fused loops too.
#include "tessel/core/dtype.hpp"
#include "tessel/core/half.hpp"
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

}  // namespace tessel::detail
