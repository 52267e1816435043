#pragma once
// Scalar semantics where C++ and XLA part ways: C++ leaves signed overflow, integer division by
// zero and out-of-range float-to-int casts undefined, and its `a < b ? a : b` drops NaN. XLA
// defines every one of them, and jax.numpy adds Python's floor rounding on top; these functions
// give exactly those results (checked against JAX in tests/semantics), without branches that stop
// the fused loops from vectorizing and without any operation that can trap.
#include <Kokkos_Macros.hpp>
#include <Kokkos_MathematicalFunctions.hpp>
#include <Kokkos_NumericTraits.hpp>
#include <concepts>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "tessel/core/dtype.hpp"
#include "tessel/core/reduce_op.hpp"

namespace tessel::xla {

// (bool stays bool: its add is XLA's or and its multiply XLA's and.)
template <class T>
using unsigned_of_t =
    typename std::conditional_t<std::same_as<T, bool>, std::type_identity<bool>, std::make_unsigned<T>>::type;

// Two's-complement wrap-around, as XLA's integer add/sub/mul/neg/abs (C++20 defines the
// unsigned-to-signed conversion as modular).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T add(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<unsigned_of_t<T>>(a) + static_cast<unsigned_of_t<T>>(b));
  else return a + b;
}
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T sub(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<unsigned_of_t<T>>(a) - static_cast<unsigned_of_t<T>>(b));
  else return a - b;
}
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(static_cast<unsigned_of_t<T>>(a) * static_cast<unsigned_of_t<T>>(b));
  else return a * b;
}
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T neg(T x) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>(unsigned_of_t<T>(0) - static_cast<unsigned_of_t<T>>(x));
  else return -x;
}
// abs(INT_MIN) is INT_MIN, as in XLA.
template <std::integral T>
KOKKOS_FORCEINLINE_FUNCTION T abs(T x) {
  return x < T(0) ? neg(x) : x;
}

// lax.div: truncating division; x / 0 is -1 and INT_MIN / -1 is INT_MIN (XLA's definitions).
// Floats divide as IEEE does.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T div(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    const bool zero = b == T(0);
    const bool overflow = a == std::numeric_limits<T>::min() && b == T(-1);
    const T q = a / (zero || overflow ? T(1) : b);  // never traps; INT_MIN / 1 is the answer for overflow
    return zero ? T(-1) : q;
  } else {
    return a / b;
  }
}
// lax.rem: the remainder of truncating division, sign of the dividend; x rem 0 is x and
// INT_MIN rem -1 is 0. Floats: C's fmod (exact).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T rem(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    const bool zero = b == T(0);
    const bool overflow = a == std::numeric_limits<T>::min() && b == T(-1);
    const T r = a % (zero || overflow ? T(1) : b);
    return zero ? a : r;
  } else {
    return Kokkos::fmod(a, b);
  }
}

// lax.sign: -1, 0 or 1 (floats keep -0.0 and NaN).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T sign(T x) {
  if constexpr (std::is_integral_v<T>) return static_cast<T>((x > T(0)) - (x < T(0)));
  else return x > T(0) ? T(1) : (x < T(0) ? T(-1) : x);
}

// jnp.floor_divide (Python's //): rounds toward negative infinity. Integers follow jnp's
// formula over lax.div, so x // 0 is -1 for x == 0 and -2 otherwise, as JAX gives on CPU; floats
// follow CPython's float_divmod, which jnp copies.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T floor_divide(T a, T b) {
  if constexpr (std::is_unsigned_v<T>) {
    return div(a, b);  // (no sign to round toward; x // 0 is all ones, as lax.div)
  } else if constexpr (std::is_integral_v<T>) {
    const T q = div(a, b);
    return sign(a) != sign(b) && rem(a, b) != T(0) ? sub(q, T(1)) : q;
  } else {
    T mod = Kokkos::fmod(a, b);
    T q = (b == T(0) ? a : a - mod) / b;
    const bool adjust = mod != T(0) && sign(b) != sign(mod);
    q = adjust ? q - T(1) : q;
    return Kokkos::round(q);  // lax.round: halves away from zero
  }
}

// jnp.remainder (Python's %): the sign of the divisor. An integer divisor of 0 gives 0.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T remainder(T a, T b) {
  if constexpr (std::is_integral_v<T>) b = b == T(0) ? T(1) : b;
  const T t = rem(a, b);
  const bool plus = ((t < T(0)) != (b < T(0))) && t != T(0);
  return plus ? add(t, b) : t;
}

// Floating max/min as XLA CPU computes them (IEEE 754-2019 maximum/minimum): a NaN operand gives
// NaN (its payload kept), and +0 is larger than -0 in either order. Equal operands are combined
// bitwise (max: a & b, which is +0 when either zero is +0; min: a | b), so that every step is a
// select or a bit operation: the row loops of a max reduction vectorize (a sign test on one
// operand, as Kokkos::signbit, left them scalar).
namespace detail {
template <class T>
using float_bits_t = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T bitwise(T a, T b, bool both) {
  using U = float_bits_t<T>;
  U const ua = __builtin_bit_cast(U, a), ub = __builtin_bit_cast(U, b);
  return __builtin_bit_cast(T, both ? U(ua & ub) : U(ua | ub));
}
}  // namespace detail
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T max(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return a > b ? a : b;
  } else {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "xla::max: float32 or float64");
    T m = a > b ? a : b;
    m = a == b ? detail::bitwise(a, b, true) : m;  // equal: prefer +0
    m = b != b ? b : m;
    return a != a ? a : m;
  }
}
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T min(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return a < b ? a : b;
  } else {
    static_assert(sizeof(T) == 4 || sizeof(T) == 8, "xla::min: float32 or float64");
    T m = a < b ? a : b;
    m = a == b ? detail::bitwise(a, b, false) : m;  // equal: prefer -0
    m = b != b ? b : m;
    return a != a ? a : m;
  }
}

// lax.integer_pow(x, n) for a constant n (jnp.power with a C++ integer exponent): binary
// exponentiation in JAX's multiplication order, 1 / x^-n for negative n.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T integer_pow(T x, std::int64_t n) {
  if (n == 0) return T(1);
  const bool reciprocal = n < 0;
  const auto bits = static_cast<std::uint64_t>(n);
  std::uint64_t y = reciprocal ? std::uint64_t(0) - bits : bits;
  T acc = x;
  bool have = false;
  while (y > 0) {
    if (y & 1u) {
      acc = have ? mul(acc, x) : x;
      have = true;
    }
    y >>= 1;
    if (y > 0) x = mul(x, x);
  }
  return reciprocal ? div(T(1), acc) : acc;
}

// Integer powers of integers by binary exponentiation over the exponent's low 6 bits, as
// jnp.power does (wrapping like its multiplies; negative exponents use their bit pattern too).
template <std::integral T>
KOKKOS_FORCEINLINE_FUNCTION T int_pow(T x, T y) {
  T acc = (x == T(0) && y != T(0)) ? T(0) : T(1);
  auto bits = static_cast<unsigned_of_t<T>>(y);
  for (int i = 0; i < 6; ++i) {
    acc = (bits & 1u) ? mul(acc, x) : acc;
    x = mul(x, x);
    bits >>= 1;
  }
  return acc;
}

// astype: float to integer conversions saturate and send NaN to 0 (XLA's fptosi.sat); the cast
// itself only ever sees in-range values, so no lane does undefined behaviour. Integers narrow by
// wrapping (two's complement, as XLA); anything converts to bool as x != 0.
template <class To, class From>
KOKKOS_FORCEINLINE_FUNCTION To convert(From x) {
  if constexpr (std::same_as<To, bool>) {
    // NaN is true; XLA:CPU takes a subnormal float for 0 (its denormals-are-zero mode).
    if constexpr (std::is_floating_point_v<From>) return !(Kokkos::abs(x) < std::numeric_limits<From>::min());
    else return x != From(0);
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    // The range [lo, hi) of x that converts: its bounds are 0 or powers of two, exact in every
    // floating type (hi is max + 1: 2^31, 256, ...).
    constexpr From lo = static_cast<From>(std::numeric_limits<To>::min());
    constexpr From hi = static_cast<From>(std::numeric_limits<To>::max() / 2 + 1) * From(2);
    const From in_range = (x >= lo && x < hi) ? x : From(0);
    const To t = static_cast<To>(in_range);
    return x != x ? To(0) : (x >= hi ? std::numeric_limits<To>::max() : (x < lo ? std::numeric_limits<To>::min() : t));
  } else if constexpr (HalfFloat<To>) {
    return To(static_cast<float>(x));  // rounds to nearest even once x is a float
  } else {
    return static_cast<To>(x);
  }
}

// The combine of a reduction op, as the kernels and the collectives both apply it.
template <ReduceOp Op, class T>
KOKKOS_FORCEINLINE_FUNCTION T combine(T a, T b) {
  if constexpr (Op == ReduceOp::sum) return add(a, b);
  else if constexpr (Op == ReduceOp::prod) return mul(a, b);
  else if constexpr (Op == ReduceOp::max) return max(a, b);
  else return min(a, b);
}

}  // namespace tessel::xla
