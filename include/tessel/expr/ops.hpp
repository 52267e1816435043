#pragma once
// Op tags: each is a name (for explain) and a scalar function run inside fused kernels. The
// function gets operands already converted to the node's compute type.
#include <Kokkos_Core.hpp>

#include "tessel/expr/math.hpp"

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

TESSEL_UNARY_OP(neg, -x)
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
    if constexpr (std::is_integral_v<T>) return x < T(0) ? T(-x) : x;
    else return math::abs(x);
  }
};
TESSEL_UNARY_OP(sin, math::sin(x))
TESSEL_UNARY_OP(cos, math::cos(x))
TESSEL_UNARY_OP(erf, math::erf(x))
TESSEL_UNARY_OP(sigmoid, math::logistic(x))
TESSEL_UNARY_OP(gelu, math::gelu(x))
TESSEL_UNARY_OP(relu, x > T(0) ? x : T(0))

TESSEL_BINARY_OP(add, a + b)
TESSEL_BINARY_OP(sub, a - b)
TESSEL_BINARY_OP(mul, a* b)
TESSEL_BINARY_OP(div, a / b)
TESSEL_BINARY_OP(pow, math::pow(a, b))
TESSEL_BINARY_OP(minimum, a < b ? a : b)
TESSEL_BINARY_OP(maximum, a > b ? a : b)
TESSEL_BINARY_OP(lt, a < b)
TESSEL_BINARY_OP(le, a <= b)
TESSEL_BINARY_OP(gt, a > b)
TESSEL_BINARY_OP(ge, a >= b)
TESSEL_BINARY_OP(eq, a == b)
TESSEL_BINARY_OP(ne, a != b)

#undef TESSEL_UNARY_OP
#undef TESSEL_BINARY_OP

// where(cond, a, b)
struct select {
  static constexpr char const* name = "select";
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T apply(bool c, T a, T b) {
    return c ? a : b;
  }
};

// astype<To>(x)
template <class To>
struct convert {
  static constexpr char const* name = "convert";
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static To apply(T x) {
    return static_cast<To>(x);
  }
};

// Reductions: identity and combine, for fused reduction kernels and the all-reduce after them.
struct sum_reduce {
  static constexpr char const* name = "sum";
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static constexpr T identity() { return T(0); }
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T combine(T a, T b) { return a + b; }
};
// mean: a sum whose result is divided by the number of reduced elements.
struct mean_reduce : sum_reduce {
  static constexpr char const* name = "mean";
};
struct prod_reduce {
  static constexpr char const* name = "prod";
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static constexpr T identity() { return T(1); }
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T combine(T a, T b) { return a * b; }
};
struct max_reduce {
  static constexpr char const* name = "max";
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static constexpr T identity() {
    if constexpr (std::is_floating_point_v<T>) return -Kokkos::Experimental::infinity_v<T>;
    else return Kokkos::Experimental::finite_min_v<T>;
  }
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T combine(T a, T b) { return a > b ? a : b; }
};
struct min_reduce {
  static constexpr char const* name = "min";
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static constexpr T identity() {
    if constexpr (std::is_floating_point_v<T>) return Kokkos::Experimental::infinity_v<T>;
    else return Kokkos::Experimental::finite_max_v<T>;
  }
  template <class T>
  KOKKOS_FORCEINLINE_FUNCTION static T combine(T a, T b) { return a < b ? a : b; }
};

}  // namespace tessel::ops
