#pragma once
// Op tags: each is a name (for explain) and a scalar function run inside fused kernels. The
// function gets operands already converted to the node's compute type.
#include <Kokkos_Macros.hpp>
#include <Kokkos_MathematicalFunctions.hpp>
#include <Kokkos_NumericTraits.hpp>

#include <type_traits>

#include "tessel/core/no_contract.hpp"
#include "tessel/core/reduce_op.hpp"
#include "tessel/expr/math.hpp"
#include "tessel/expr/xla_scalar.hpp"

namespace tessel::ops {

#define TESSEL_UNARY_OP(tag, expr)                                        \
  struct tag {                                                            \
    static constexpr char const* name = #tag;                             \
    template <class T>                                                    \
    KOKKOS_FORCEINLINE_FUNCTION static T apply(T x) {                          \
      return expr;                                                        \
    }                                                                     \
  };
#define TESSEL_BINARY_OP(tag, expr)                                       \
  struct tag {                                                            \
    static constexpr char const* name = #tag;                             \
    template <class T>                                                    \
    KOKKOS_FORCEINLINE_FUNCTION static auto apply(T a, T b) {                  \
      return expr;                                                        \
    }                                                                     \
  };

TESSEL_UNARY_OP(neg, xla::neg(x))
TESSEL_UNARY_OP(exp, math::exp(x))
// exp of an argument known to be <= 0 (softmax's x - max): same values, fewer instructions.
struct exp_nonpositive {
  static constexpr char const* name = "exp";
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T apply(T x) {
    return math::exp_nonpositive(x);
  }
};
TESSEL_UNARY_OP(log, math::log(x))
TESSEL_UNARY_OP(tanh, math::tanh(x))
TESSEL_UNARY_OP(sqrt, math::sqrt(x))
TESSEL_UNARY_OP(rsqrt, math::rsqrt(x))
struct abs {
  static constexpr char const* name = "abs";
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T apply(T x) {
    if constexpr (std::is_integral_v<T>) return xla::abs(x);
    else return math::abs(x);
  }
};
TESSEL_UNARY_OP(sin, math::sin(x))
TESSEL_UNARY_OP(cos, math::cos(x))
TESSEL_UNARY_OP(erf, math::erf(x))
TESSEL_UNARY_OP(sigmoid, math::logistic(x))
TESSEL_UNARY_OP(gelu, math::gelu(x))
// Rounding leaves integers as they are (jnp.floor of an int32 array is that array); jnp.round
// rounds halves to even (the default rounding mode's nearbyint).
#define TESSEL_ROUNDING_OP(tag, fn)                                       \
  struct tag {                                                            \
    static constexpr char const* name = #tag;                             \
    template <class T>                                                    \
    KOKKOS_FORCEINLINE_FUNCTION static T apply(T x) {                     \
      if constexpr (std::is_integral_v<T>) return x;                      \
      else return fn(x);                                                  \
    }                                                                     \
  };
TESSEL_ROUNDING_OP(floor, Kokkos::floor)
TESSEL_ROUNDING_OP(ceil, Kokkos::ceil)
TESSEL_ROUNDING_OP(round, Kokkos::nearbyint)
#undef TESSEL_ROUNDING_OP
TESSEL_UNARY_OP(square, xla::mul(x, x))
// jax.nn.relu is maximum(x, 0): NaN stays NaN.
TESSEL_UNARY_OP(relu, xla::max(x, T(0)))
TESSEL_UNARY_OP(sign, xla::sign(x))

TESSEL_BINARY_OP(add, xla::add(a, b))
TESSEL_BINARY_OP(sub, xla::sub(a, b))
TESSEL_BINARY_OP(mul, xla::mul(a, b))
// True division: operands arrive as floats (jnp.true_divide); lax.div truncates integers.
TESSEL_BINARY_OP(div, a / b)
TESSEL_BINARY_OP(lax_div, xla::div(a, b))
TESSEL_BINARY_OP(lax_rem, xla::rem(a, b))
TESSEL_BINARY_OP(floor_divide, xla::floor_divide(a, b))
TESSEL_BINARY_OP(remainder, xla::remainder(a, b))
struct pow {
  static constexpr char const* name = "pow";
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) return xla::int_pow(a, b);
    else return math::pow(a, b);
  }
};
// x ** n for a C++ integer n: the exponent arrives converted to the base's type, exactly.
struct integer_pow {
  static constexpr char const* name = "integer_pow";
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T apply(T a, T n) {
    return xla::integer_pow(a, static_cast<std::int64_t>(n));
  }
};
TESSEL_BINARY_OP(minimum, xla::min(a, b))
TESSEL_BINARY_OP(maximum, xla::max(a, b))
TESSEL_BINARY_OP(lt, a < b)
TESSEL_BINARY_OP(le, a <= b)
TESSEL_BINARY_OP(gt, a > b)
TESSEL_BINARY_OP(ge, a >= b)
TESSEL_BINARY_OP(eq, a == b)
TESSEL_BINARY_OP(ne, a != b)

#undef TESSEL_UNARY_OP
#undef TESSEL_BINARY_OP

// a * b with the product kept apart from a following add (never an FMA): var's scaling by the
// reciprocal of its count, which a fused kernel (the value kept per row) and a kernel of its own
// (the value read back) must round alike.
struct mul_apart {
  static constexpr char const* name = "mul";
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T apply(T a, T b) {
    return no_contract_mul(a, b);
  }
};

// where(cond, a, b)
struct select {
  static constexpr char const* name = "select";
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T apply(bool c, T a, T b) {
    // A float ?: lets g++ sink a branch's arithmetic under the branch, where it may not speculate
    // it, and the row loop stays scalar at 256 bits (exp(where(m, x * c, -inf)) 10x slower on
    // AVX2); math's masked select stays a blend.
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) return math::detail::select(c, a, b);
    else return c ? a : b;
  }
};

// astype<To>(x)
template <class To>
struct convert {
  static constexpr char const* name = "convert";
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static To apply(T x) {
    return xla::convert<To>(x);
  }
};

// Reductions: identity and combine, for fused reduction kernels; `combiner` names the same
// combine for the collective that completes a sharded reduction; `divides` marks mean.
struct sum_reduce {
  static constexpr char const* name = "sum";
  static constexpr ReduceOp combiner = ReduceOp::sum;
  static constexpr bool divides = false;
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static constexpr T identity() { return T(0); }
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T combine(T a, T b) { return xla::add(a, b); }
};
// mean: a sum whose result is divided by the number of reduced elements.
struct mean_reduce : sum_reduce {
  static constexpr char const* name = "mean";
  static constexpr bool divides = true;
};
struct prod_reduce {
  static constexpr char const* name = "prod";
  static constexpr ReduceOp combiner = ReduceOp::prod;
  static constexpr bool divides = false;
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static constexpr T identity() { return T(1); }
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T combine(T a, T b) { return xla::mul(a, b); }
};
struct max_reduce {
  static constexpr char const* name = "max";
  static constexpr ReduceOp combiner = ReduceOp::max;
  static constexpr bool divides = false;
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static constexpr T identity() {
    if constexpr (std::is_floating_point_v<T>) return -Kokkos::Experimental::infinity_v<T>;
    else return Kokkos::Experimental::finite_min_v<T>;
  }
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T combine(T a, T b) { return xla::max(a, b); }
};
struct min_reduce {
  static constexpr char const* name = "min";
  static constexpr ReduceOp combiner = ReduceOp::min;
  static constexpr bool divides = false;
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static constexpr T identity() {
    if constexpr (std::is_floating_point_v<T>) return Kokkos::Experimental::infinity_v<T>;
    else return Kokkos::Experimental::finite_max_v<T>;
  }
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T combine(T a, T b) { return xla::min(a, b); }
};

}  // namespace tessel::ops
