// tessel: jax.random.uniform and jax.random.normal from the bits threefry.hpp gives each element,
// bit for bit.
//
// The operation order and the FMA pairs below were read off XLA:CPU's optimized LLVM IR and the
// machine code of jax.random.normal (XLA_FLAGS=--xla_dump_to=DIR, jaxlib 0.10.2).
//
// What is bit-exact (against jax.random on XLA:CPU, x86-64 with FMA):
//   * PRNGKey, split, fold_in, bits32, bits64: exact everywhere (integer arithmetic).
//   * uniform_from_bits (float and double): exact everywhere (one exact subtraction and one fma).
//   * normal_from_bits(std::uint32_t) -> float: exact.  XLA:CPU lowers erf_inv to Giles'
//     single-precision polynomial and log1p / log to its own polynomial code, and LLVM then fuses
//     some (not all) multiply-add pairs into FMAs; this file reproduces that arithmetic operation by
//     operation with explicit fma() calls and a contraction barrier where XLA keeps a separate
//     multiply and add.  Only + - * / sqrt fma and bit operations are used, all correctly rounded,
//     so the result is the same on any IEEE-754 host or GPU (CUDA/HIP without fast-math flags).
//   * normal_from_bits(std::uint64_t) -> double: XLA:CPU calls the C library's log() for the
//     |x| >= sqrt(2)-1 branch of log1p; this file calls Kokkos::log there.  On a glibc host that is
//     the same function, and the result matched JAX bit for bit in the tests (glibc 2.36 for JAX,
//     2.41 for the test).  On a GPU, Kokkos::log is the vendor's log (within 1 ulp), so float64
//     normals can differ from JAX CPU in the last bits there.
//   JAX on GPU/TPU is a different reference: XLA:GPU may lower erf_inv / log1p differently, and
//   JAX on a CPU without FMA would round differently; both are out of scope.
//
// Compile flags that matter:
//   * no -ffast-math / -funsafe-math-optimizations / -ffinite-math-only (host), no --use_fast_math,
//     -ftz=true, -prec-div=false or -prec-sqrt=false (nvcc): they change rounding.
//   * -ffp-contract (g++ defaults to =fast for C++, even with -std=c++20) and -march/-mfma do NOT
//     matter: the fused steps are explicit fma() calls (correctly rounded in software when the
//     target has no FMA instruction), and the one product XLA must not fuse goes through
//     detail::no_contract.  The float math needs FLT_EVAL_METHOD == 0 (no x87 excess precision).
#pragma once
#include <cstdint>
#include <type_traits>

#include <Kokkos_Macros.hpp>
#include <Kokkos_MathematicalFunctions.hpp>
#include <Kokkos_NumericTraits.hpp>

#include "tessel/core/half.hpp"
#include "tessel/core/no_contract.hpp"
#include "tessel/expr/math.hpp"
#include "tessel/runtime/threefry.hpp"

namespace tessel::prng {

// ------------------------------------------------------------------------------------------------
// Uniform: jax.random.uniform(key, shape, dtype, minval, maxval) from the element's bits:
//   f = bitcast(bits >> (nbits - nmant) | bits(1.0)) - 1        in [0, 1), exact
//   r = max(minval, f * (maxval - minval) + minval)
// XLA:CPU computes f * (maxval - minval) + minval as one fused multiply-add (checked in the
// generated code and in the tests with minval/maxval other than 0/1), and maxval - minval is
// rounded to the dtype first.

KOKKOS_INLINE_FUNCTION float uniform_from_bits(std::uint32_t bits, float minval = 0.0f,
                                               float maxval = 1.0f) noexcept {
  const float f = detail::bit_cast<float>((bits >> 9) | 0x3F800000u) - 1.0f;
  const float r = detail::fma(f, maxval - minval, minval);
  return r > minval ? r : minval;  // lax.max(minval, r); r is never NaN for finite bounds
}

KOKKOS_INLINE_FUNCTION double uniform_from_bits(std::uint64_t bits, double minval = 0.0,
                                                double maxval = 1.0) noexcept {
  const double f =
      detail::bit_cast<double>((bits >> 12) | std::uint64_t{0x3FF0000000000000u}) - 1.0;
  const double r = detail::fma(f, maxval - minval, minval);
  return r > minval ? r : minval;
}

// ------------------------------------------------------------------------------------------------
// Normal: jax.random.normal(key, shape, dtype) from the element's bits:
//   u = uniform(bits, nextafter(-1, 0), 1);  z = sqrt(2) * erf_inv(u)
// with erf_inv and log1p evaluated exactly the way XLA:CPU (jaxlib 0.10.2) evaluates them.

namespace detail {

// XLA:CPU's log for float32 (Eigen/Cephes-style range reduction and degree-8 polynomial), with the
// FMA pairs LLVM forms for it.  Special cases as XLA: 0 -> -inf, +inf -> +inf, < 0 or NaN -> NaN.
KOKKOS_INLINE_FUNCTION float xla_log_f32(float a) noexcept {
  if (!(a > 0.0f)) return a == 0.0f ? -inf_f32() : Kokkos::Experimental::quiet_NaN_v<float>;
  if (a == inf_f32()) return a;
  return math::detail::log_core(a);  // the same polynomial the fused kernels use
}

// XLA:CPU's log1p for float32: log(1 + x) for |x| >= sqrt(2) - 1, otherwise the Cephes rational
// approximation x - x^2/2 + x^3 P(x)/Q(x).
KOKKOS_INLINE_FUNCTION float xla_log1p_f32(float x) noexcept {
  const float ax = x < 0.0f ? -x : x;
  if (!(ax < 0x1.a8279ap-2f)) return xla_log_f32(x + 1.0f);
  float q = x + 0x1.e2035ap+3f;  // fma(1, x, c): XLA starts both chains at x * 0 + c
  q = fma(q, x, 0x1.4c30b6p+6f);
  q = fma(q, x, 0x1.bb865ap+7f);
  q = fma(q, x, 0x1.351946p+8f);
  q = fma(q, x, 0x1.b0db14p+7f);
  q = fma(q, x, 0x1.e0f304p+5f);
  float p = fma(4.527e-05f, x, 0x1.fe818ap-2f);
  p = fma(p, x, 0x1.a509f4p+2f);
  p = fma(p, x, 0x1.de9738p+4f);
  p = fma(p, x, 0x1.e798ecp+5f);
  p = fma(p, x, 0x1.c8e75ap+5f);
  p = fma(p, x, 0x1.40a202p+4f);
  const float x2 = x * x;
  const float r = fma(x2, -0.5f, (x * x2) * (p / q));
  return x + r;
}

// XLA's erf_inv for float32 (M. Giles, "Approximating the erfinv function", single precision),
// as XLA:CPU evaluates it after LLVM's FMA formation.
KOKKOS_INLINE_FUNCTION float xla_erf_inv_f32(float u) noexcept {
  const float l = xla_log1p_f32(no_contract_mul(u, -u));  // l = log1p(-u*u) = -w
  const bool central = l > -5.0f;                         // w < 5
  const float t = central ? -2.5f - l : Kokkos::sqrt(-l) + -3.0f;
  float p;
  if (central) {
    p = fma(t, 0x1.e2cb10p-26f, 0x1.70966cp-22f);
    p = fma(t, p, -0x1.d8e6aep-19f);
    p = fma(t, p, -0x1.26b582p-18f);
    p = fma(t, p, 0x1.ca65b6p-13f);
    p = fma(t, p, -0x1.48a810p-10f);
    p = fma(t, p, -0x1.11c9dep-8f);
    p = fma(t, p, 0x1.f91ec6p-3f);
    p = fma(t, p, 0x1.805c5ep+0f);
  } else {
    p = fma(t, -0x1.a3e136p-13f, 0x1.a76ad6p-14f);
    p = fma(t, p, 0x1.61b8e4p-10f);
    p = fma(t, p, -0x1.e17bcep-9f);
    p = fma(t, p, 0x1.7824f6p-8f);
    p = fma(t, p, -0x1.f38baep-8f);
    p = fma(t, p, 0x1.354afcp-7f);
    p = fma(t, p, 0x1.006db6p+0f);
    p = fma(t, p, 0x1.6a9efcp+1f);
  }
  const float au = u < 0.0f ? -u : u;
  return u * (au == 1.0f ? inf_f32() : p);
}

// XLA:CPU's log1p for float64: the C library's log(1 + x) for |x| >= sqrt(2) - 1, otherwise the
// Cephes rational approximation.
KOKKOS_INLINE_FUNCTION double xla_log1p_f64(double x) noexcept {
  const double ax = x < 0.0 ? -x : x;
  if (!(ax < 0x1.a827999fcef32p-2)) return Kokkos::log(x + 1.0);
  double q = x + 0x1.e20359e903e37p+3;
  q = fma(q, x, 0x1.4c30b52213498p+6);
  q = fma(q, x, 0x1.bb86590fcfb56p+7);
  q = fma(q, x, 0x1.351945dc908a5p+8);
  q = fma(q, x, 0x1.b0db13e48e066p+7);
  q = fma(q, x, 0x1.e0f304466448ep+5);
  double p = fma(0x1.7bc0962b395cap-15, x, 0x1.fe818a0fe1a83p-2);
  p = fma(p, x, 0x1.a509f46f4fa53p+2);
  p = fma(p, x, 0x1.de9738b8cb9c9p+4);
  p = fma(p, x, 0x1.e798eb86c3351p+5);
  p = fma(p, x, 0x1.c8e7597479a10p+5);
  p = fma(p, x, 0x1.40a202d99830ap+4);
  const double x2 = x * x;
  const double r = fma(x2, -0.5, (x * x2) * (p / q));
  return x + r;
}

// XLA's erf_inv for float64 (Giles' double precision version, three branches).
KOKKOS_INLINE_FUNCTION double xla_erf_inv_f64(double u) noexcept {
  const double l = xla_log1p_f64(no_contract_mul(u, -u));  // l = -w
  double p;
  if (l > -6.25) {  // w < 6.25
    const double t = -3.125 - l;
    p = fma(-0x1.135d2e746e627p-68, t, -0x1.8ddf93324d327p-63);
    p = fma(p, t, 0x1.7b83eef0b7c9fp-60);
    p = fma(p, t, 0x1.9ba72cd589b91p-57);
    p = fma(p, t, -0x1.33689090a6b96p-53);
    p = fma(p, t, 0x1.82e11898132e0p-56);
    p = fma(p, t, 0x1.de4acfd9e26bap-48);
    p = fma(p, t, -0x1.6d33eed66c487p-45);
    p = fma(p, t, -0x1.6f2167040d8e2p-44);
    p = fma(p, t, 0x1.72a22c2d77e20p-39);
    p = fma(p, t, -0x1.c8859c4e5c0afp-37);
    p = fma(p, t, -0x1.dc583d118a561p-35);
    p = fma(p, t, 0x1.20f47ccf46b3cp-30);
    p = fma(p, t, -0x1.1a9e38dc84d60p-28);
    p = fma(p, t, -0x1.f36cd6d3d46a9p-26);
    p = fma(p, t, 0x1.c6b4f5d03b787p-22);
    p = fma(p, t, -0x1.6e8a5434ae8a2p-20);
    p = fma(p, t, -0x1.d1d1f7b8736f6p-17);
    p = fma(p, t, 0x1.879c2a212f024p-13);
    p = fma(p, t, -0x1.845769484fca8p-11);
    p = fma(p, t, -0x1.8b6c33114f909p-8);
    p = fma(p, t, 0x1.ebd80d9b13e28p-3);
    p = fma(p, t, 0x1.a755e7c99ae86p+0);
  } else if (l > -16.0) {  // 6.25 <= w < 16
    const double t = Kokkos::sqrt(-l) - 3.25;
    p = fma(0x1.3040f87dbd932p-29, t, 0x1.85cbe52878635p-24);
    p = fma(p, t, -0x1.2777453dd3955p-22);
    p = fma(p, t, 0x1.395abcd554c6cp-26);
    p = fma(p, t, 0x1.936388a3790adp-20);
    p = fma(p, t, -0x1.0d5db812b5083p-18);
    p = fma(p, t, 0x1.8860cd5d652f6p-19);
    p = fma(p, t, 0x1.a29a0cacdfb23p-17);
    p = fma(p, t, -0x1.8cef1f80281f2p-15);
    p = fma(p, t, 0x1.1e684d0b9188ap-14);
    p = fma(p, t, 0x1.932cd54c8a222p-16);
    p = fma(p, t, -0x1.7448a89ef8aa3p-12);
    p = fma(p, t, 0x1.f3cc55ad40c25p-11);
    p = fma(p, t, -0x1.ba924132f38b1p-10);
    p = fma(p, t, 0x1.468eeca533cf8p-9);
    p = fma(p, t, -0x1.ebadabb891bbdp-9);
    p = fma(p, t, 0x1.5ffcfe5b76afcp-8);
    p = fma(p, t, 0x1.0158a6d641d39p+0);
    p = fma(p, t, 0x1.8abcc380d5a48p+1);
  } else {  // w >= 16
    const double t = Kokkos::sqrt(-l) - 5.0;
    p = fma(-0x1.dcec3a7785389p-36, t, -0x1.18feec0e38727p-32);
    p = fma(p, t, 0x1.9e6bf2dda45e3p-30);
    p = fma(p, t, -0x1.0468fb24e2f5fp-28);
    p = fma(p, t, 0x1.05ac6a8fba182p-27);
    p = fma(p, t, -0x1.0102e495fb9c0p-26);
    p = fma(p, t, 0x1.f4c20e1334af8p-26);
    p = fma(p, t, -0x1.22d220fdf9c3ep-24);
    p = fma(p, t, 0x1.ebc8bb824cb54p-23);
    p = fma(p, t, -0x1.0a8d40ea372ccp-20);
    p = fma(p, t, 0x1.2fbd29d093d2bp-18);
    p = fma(p, t, -0x1.4a3497e1e0facp-16);
    p = fma(p, t, 0x1.3ebf4eb00938fp-14);
    p = fma(p, t, -0x1.c2f36a8fc5d53p-13);
    p = fma(p, t, -0x1.22ea5df04047cp-13);
    p = fma(p, t, 0x1.02a30d1fba0dcp+0);
    p = fma(p, t, 0x1.3664ddd1ad7fbp+2);
  }
  const double au = u < 0.0 ? -u : u;
  return u * (au == 1.0 ? inf_f64() : p);
}

}  // namespace detail

// jax.random.normal(key, shape, float32) element from bits32(key, i).
KOKKOS_INLINE_FUNCTION float normal_from_bits(std::uint32_t bits) noexcept {
  const float u = uniform_from_bits(bits, -0x1.fffffep-1f, 1.0f);  // nextafter(-1, 0) .. 1
  return detail::xla_erf_inv_f32(u) * 0x1.6a09e6p+0f;              // * float(sqrt(2))
}

// jax.random.uniform / normal in bfloat16 or float16 from the float32 draw's word w
// (tests/data/jax_half/README.md): bfloat16 takes 7 mantissa bits from w's low byte (JAX draws 8
// bits), float16 10 from its low 16; the scaling runs in the dtype, every op rounded.
template <class H>
KOKKOS_INLINE_FUNCTION H half_uniform_from_bits(std::uint32_t w, float minval, float maxval) noexcept {
  auto r = [](float v) { return static_cast<float>(H(v)); };
  float f;
  if constexpr (std::is_same_v<H, bfloat16>)
    f = detail::bit_cast<float>((0x3f80u | ((w & 0xffu) >> 1)) << 16) - 1.0f;
  else
    f = static_cast<float>(H::from_bits(static_cast<std::uint16_t>(0x3c00u | ((w & 0xffffu) >> 6)))) - 1.0f;
  float const lo = r(minval), hi = r(maxval);
  float const v = r(r(f * r(hi - lo)) + lo);
  return H(v > lo ? v : lo);
}
template <class H>
KOKKOS_INLINE_FUNCTION H half_normal_from_bits(std::uint32_t w) noexcept {
  auto r = [](float v) { return static_cast<float>(H(v)); };
  float const lo = -1.0f + (std::is_same_v<H, bfloat16> ? 0x1p-8f : 0x1p-11f);  // nextafter(-1, 0) in H
  float const u = static_cast<float>(half_uniform_from_bits<H>(w, lo, 1.0f));
  return H(r(0x1.6a09e6p+0f) * r(detail::xla_erf_inv_f32(u)));
}

// jax.random.normal(key, shape, float64) element from bits64(key, i) (jax_enable_x64=True).
KOKKOS_INLINE_FUNCTION double normal_from_bits(std::uint64_t bits) noexcept {
  const double u = uniform_from_bits(bits, -0x1.fffffffffffffp-1, 1.0);
  return detail::xla_erf_inv_f64(u) * 0x1.6a09e667f3bcdp+0;
}

// ------------------------------------------------------------------------------------------------
// Convenience: element i (row-major flat index) of jax.random.{uniform,normal}(key, shape, dtype).

KOKKOS_INLINE_FUNCTION float uniform_f32(Key key, std::uint64_t i, float minval = 0.0f,
                                         float maxval = 1.0f) noexcept {
  return uniform_from_bits(bits32(key, i), minval, maxval);
}

KOKKOS_INLINE_FUNCTION double uniform_f64(Key key, std::uint64_t i, double minval = 0.0,
                                          double maxval = 1.0) noexcept {
  return uniform_from_bits(bits64(key, i), minval, maxval);
}

KOKKOS_INLINE_FUNCTION float normal_f32(Key key, std::uint64_t i) noexcept {
  return normal_from_bits(bits32(key, i));
}

KOKKOS_INLINE_FUNCTION double normal_f64(Key key, std::uint64_t i) noexcept {
  return normal_from_bits(bits64(key, i));
}

}  // namespace tessel::prng
