#pragma once
// TEMPORARY: std:: math until expr/math.hpp lands.
#include <Kokkos_Core.hpp>
namespace tessel::math {
template <class T> KOKKOS_INLINE_FUNCTION T exp(T x) { return Kokkos::exp(x); }
template <class T> KOKKOS_INLINE_FUNCTION T log(T x) { return Kokkos::log(x); }
template <class T> KOKKOS_INLINE_FUNCTION T tanh(T x) { return Kokkos::tanh(x); }
template <class T> KOKKOS_INLINE_FUNCTION T sqrt(T x) { return Kokkos::sqrt(x); }
template <class T> KOKKOS_INLINE_FUNCTION T rsqrt(T x) { return T(1) / Kokkos::sqrt(x); }
template <class T> KOKKOS_INLINE_FUNCTION T abs(T x) { return Kokkos::abs(x); }
template <class T> KOKKOS_INLINE_FUNCTION T sin(T x) { return Kokkos::sin(x); }
template <class T> KOKKOS_INLINE_FUNCTION T cos(T x) { return Kokkos::cos(x); }
template <class T> KOKKOS_INLINE_FUNCTION T erf(T x) { return Kokkos::erf(x); }
template <class T> KOKKOS_INLINE_FUNCTION T logistic(T x) { return T(1) / (T(1) + Kokkos::exp(-x)); }
template <class T> KOKKOS_INLINE_FUNCTION T gelu(T x) { return T(0.5) * x * (T(1) + Kokkos::tanh(T(0.7978845608028654) * (x + T(0.044715) * x * x * x))); }
template <class T> KOKKOS_INLINE_FUNCTION T pow(T a, T b) { return Kokkos::pow(a, b); }
}
