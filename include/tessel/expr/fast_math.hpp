#pragma once
// tessel::fast_math: opt-in cheaper exp, tanh, sigmoid, gelu and softmax. They are NOT bit-equal
// to JAX (tessel's default functions are: expr/math.hpp); use them only where the error bounds
// below are acceptable. The opt-in is explicit in the code (include this header, call
// fast_math::gelu(x) instead of gelu(x)), so it never changes an existing program, and it shows in
// explain(): these nodes are named exp_fast, tanh_fast, sigmoid_fast, gelu_fast.
//
// Why they are faster: XLA's exp clamps twice and emulates floor with conversions and a compare;
// its tanh is a 13/6 rational function with a division; jax.nn.softmax divides every element by
// the row's sum. Here exp rounds with the 1.5 * 2^23 shift trick and evaluates a degree-5
// polynomial, tanh and gelu are built on that exp (gelu(x) = x * sigmoid(2u), one division and
// no tanh), and softmax multiplies by the reciprocal of the row's sum (one division per row).
//
// Error bounds (float32; "exact" is the function evaluated in double precision on the same float
// input; checked by tests/expr/test_fast_math.cpp over every float in the sweeps it lists):
//   exp(x)      |rel err| <= 4e-7 where exact >= 2^-125; results below 2^-125 may flush to 0
//               (XLA's exp flushes below 2^-127). exp(+inf) = +inf, exp(-inf) = 0, NaN -> NaN,
//               overflow (x > 88.7228) -> +inf.
//   sigmoid(x)  |abs err| <= 3e-7 and |rel err| <= 5e-7 where exact >= 2^-124.
//   tanh(x)     |rel err| <= 1e-6 everywhere (a polynomial for |x| < 0.25, so tiny x keeps its
//               relative accuracy; tanh(+-0) = +-0, +-inf -> +-1, NaN -> NaN).
//   gelu(x)     x * sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)), which is exactly jax.nn.gelu's tanh
//               formula: |err| <= 5e-7 |exact| + 6e-8 |x|, or <= 2^-120. The |x| term is the
//               rounding of the argument, magnified where gelu's tail falls steeply (x < -2); JAX's
//               own float32 evaluation errs by up to about as much there (1 + tanh(u) cancels).
//               gelu(+inf) = +inf, gelu(-inf) = NaN (as JAX), NaN -> NaN.
//   softmax(x)  each element within 7e-7 (relative) of tessel's default softmax (JAX's values).
// For comparison, a float32 ulp is 6e-8 relative at most: 4e-7 is about 7 ulp. The largest errors
// the sweep finds are under half of each bound (exp 1.75e-7, sigmoid 2.4e-7, tanh 2.9e-7
// relative; gelu 0.37 of its bound): the bounds leave room for compilers that contract
// differently.
#include <Kokkos_Macros.hpp>
#include <Kokkos_MathematicalFunctions.hpp>
#include <Kokkos_NumericTraits.hpp>
#include <cstdint>

#include "tessel/expr/elementwise.hpp"
#include "tessel/expr/math.hpp"
#include "tessel/expr/reduce.hpp"

namespace tessel::math::fast {

namespace detail {
using tessel::math::detail::as_float;
using tessel::math::detail::as_u32;
using tessel::math::detail::fma;
using tessel::math::detail::select;

// exp(x) as p * 2^(n-1) with p ~ 2 e^r: the scale's exponent field n + 126 stays in [0, 254] for
// n in [-126, 128], so the largest finite results (n = 128) need no second scaling; n = -126
// gives a zero scale (the flush below 2^-125). Clamping x keeps n in that range; NaN passes
// through the clamps (comparisons with NaN are false) and makes p NaN.
template <bool NonPositive>
KOKKOS_FORCEINLINE_FUNCTION float exp(float x) noexcept {
  float xc = select(x < -87.6f, -87.6f, x);
  // Just above ln(FLT_MAX): exp(+inf) and every x past the overflow threshold round to +inf.
  if constexpr (!NonPositive) xc = select(xc > 0x1.62e430p+6f, 0x1.62e430p+6f, xc);
  constexpr float shift = 0x1.8p23f;  // adding it rounds to an integer, which lands in the low bits
  const float t = fma(xc, 0x1.715476p+0f, shift);
  const float n = t - shift;
  // r = x - n ln2 in two steps, as XLA's (ln2 = 0.693359375 - 2.12194440e-4; n * 0.693359375 is
  // exact for |n| <= 128).
  float r = fma(n, -0x1.63p-1f, xc);
  r = fma(n, 0x1.bd0106p-13f, r);
  // 2 e^r on [-ln2/2, ln2/2]: 2 + 2r + r^2 q(r), q a near-minimax cubic (relative error 1.05e-7
  // in real arithmetic); the doubled coefficients round exactly as the plain ones would.
  float p = fma(0x1.10627ap-6f, r, 0x1.572a08p-4f);
  p = fma(p, r, 0x1.5557aep-2f);
  p = fma(p, r, 0x1.fffdfcp-1f);
  p = fma(p, r, 2.0f);
  p = fma(p, r, 2.0f);
  const float scale = as_float((as_u32(t) + 126u) << 23);  // 2^(n-1): t's low bits hold n
  return p * scale;
}
}  // namespace detail

KOKKOS_FORCEINLINE_FUNCTION float exp(float x) noexcept { return detail::exp<false>(x); }
// x <= 0 or NaN (softmax's x - max): the upper clamp is left out.
KOKKOS_FORCEINLINE_FUNCTION float exp_nonpositive(float x) noexcept { return detail::exp<true>(x); }

// 1 / (1 + exp(-x)): exp's relative error carries over (scaled by exp/(1+exp) <= 1) plus the
// division's rounding. exp(-x) = +inf for x < -88.7 gives 1/inf = 0.
KOKKOS_FORCEINLINE_FUNCTION float sigmoid(float x) noexcept { return 1.0f / (1.0f + exp(-x)); }

// tanh(|x|) = (1 - e) / (1 + e), e = exp(-2|x|) in (0, 1], sign restored; for |x| < 0.25, where
// 1 - e would cancel, the odd Taylor polynomial to x^9 (truncation < 1e-8 relative).
KOKKOS_FORCEINLINE_FUNCTION float tanh(float x) noexcept {
  using detail::fma;
  const float ax = tessel::math::detail::fabs(x);
  const float e = detail::exp<true>(-2.0f * ax);
  const float big = (1.0f - e) / (1.0f + e);
  const float x2 = ax * ax;
  float q = fma(x2, 0x1.664f48p-6f, -0x1.ba1ba2p-5f);  // 62/2835, -17/315
  q = fma(q, x2, 0x1.111112p-3f);                      // 2/15
  q = fma(q, x2, -0x1.555556p-2f);                     // -1/3
  const float small = fma(q * x2, ax, ax);
  // tanh(|x|), then x's sign (so tanh(-0) = -0).
  const float r = detail::select(ax < 0.25f, small, big);
  return detail::as_float(detail::as_u32(r) | (detail::as_u32(x) & 0x80000000u));
}

// jax.nn.gelu's tanh formula rewritten with x (1 + tanh(u)) / 2 = x sigmoid(2u) = x / (1 + exp(-2u)):
// one exp and one division, no tanh.
KOKKOS_FORCEINLINE_FUNCTION float gelu(float x) noexcept {
  const float x2 = x * x;
  // -2u = -2 sqrt(2/pi) (x + 0.044715 x^3) = x * (a + b x^2)
  const float m = x * detail::fma(x2, -0x1.2444f2p-4f, -0x1.988454p+0f);
  return x / (1.0f + exp(m));
}

// Double precision: the exact functions (the fast variants are a float32 matter).
KOKKOS_FORCEINLINE_FUNCTION double exp(double x) noexcept { return Kokkos::exp(x); }
KOKKOS_FORCEINLINE_FUNCTION double exp_nonpositive(double x) noexcept { return Kokkos::exp(x); }
KOKKOS_FORCEINLINE_FUNCTION double sigmoid(double x) noexcept { return 1.0 / (1.0 + Kokkos::exp(-x)); }
KOKKOS_FORCEINLINE_FUNCTION double tanh(double x) noexcept { return Kokkos::tanh(x); }
KOKKOS_FORCEINLINE_FUNCTION double gelu(double x) noexcept {
  return x * ((Kokkos::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)) + 1.0) * 0.5);
}

}  // namespace tessel::math::fast

namespace tessel::ops {
#define TESSEL_FAST_OP(tag, fn)                            \
  struct tag {                                             \
    static constexpr char const* name = #tag;              \
    template <class T>                                     \
    KOKKOS_FORCEINLINE_FUNCTION static T apply(T x) {      \
      return math::fast::fn(x);                            \
    }                                                      \
  };
TESSEL_FAST_OP(exp_fast, exp)
TESSEL_FAST_OP(tanh_fast, tanh)
TESSEL_FAST_OP(sigmoid_fast, sigmoid)
TESSEL_FAST_OP(gelu_fast, gelu)
// exp of an argument known to be <= 0 (softmax's x - max).
struct exp_fast_nonpositive {
  static constexpr char const* name = "exp_fast";
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T apply(T x) {
    return math::fast::exp_nonpositive(x);
  }
};
#undef TESSEL_FAST_OP
}  // namespace tessel::ops

namespace tessel::fast_math {

#define TESSEL_FAST_FUNCTION(fn, Op)                                                    \
  template <class X>                                                                    \
    requires(Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>)              \
  auto fn(X const& x) {                                                                 \
    return tessel::detail::make_node<ops::Op, tessel::detail::Typing::floating>(as_node(x)); \
  }
TESSEL_FAST_FUNCTION(exp, exp_fast)
TESSEL_FAST_FUNCTION(tanh, tanh_fast)
TESSEL_FAST_FUNCTION(sigmoid, sigmoid_fast)
TESSEL_FAST_FUNCTION(gelu, gelu_fast)
#undef TESSEL_FAST_FUNCTION

// softmax(x, axis) = e * (1 / sum(e)), e = exp(x - max(x)): the row's reciprocal is computed once
// per row (the kernel hoists it), so there is no division per element; e is computed once per
// element as in tessel's softmax (runtime/row_cache.hpp).
template <class X>
auto softmax(X const& x, int axis = -1) {
  auto e = tessel::detail::make_node<ops::exp_fast_nonpositive, tessel::detail::Typing::floating>(
      as_node(x - max(x, axis, true)));
  return e * (1.0f / sum(e, axis, true));
}

}  // namespace tessel::fast_math
