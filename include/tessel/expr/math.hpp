// tessel: elementwise math for fused kernels -- fast, branch-free, vectorizable, and for float the
// same numbers as JAX on CPU.
//
// Fused elementwise kernels run loops like `for (e...) out[e] = f(in1[e], in2[e], ...)`.  With the
// C library's expf / tanhf ... such a loop does not vectorize (one scalar call per element) and is
// compute-bound far below memory bandwidth.  XLA:CPU instead emits its own branch-free polynomial
// and rational approximations; this header reproduces them operation by operation, so the loop
// vectorizes and the results match jax.numpy on CPU bit for bit.  Every function is
// KOKKOS_FORCEINLINE_FUNCTION (host and device; forced because a call left in the loop body stops
// vectorization, and g++ declines to inline the larger ones on its own), allocation-free, free of
// branches (special cases are mask selects, which compile to blends), and sets no errno.
//
// Reference: jax / jaxlib 0.10.2 on XLA:CPU (x86-64 with AVX2+FMA), read off the optimized LLVM IR
// and the machine code (XLA_FLAGS=--xla_dump_to=DIR); checked by tests/expr/test_math.cpp against
// vectors from tests/data/jax_math/make_vectors.py, and once exhaustively (all 2^32 float inputs
// for exp, log, tanh, erf, logistic, gelu, sqrt; every 4th for sin, cos) with 0 mismatches.
//
// float functions and how they relate to JAX (jnp.* / jax.nn.* on a float32 array on CPU):
//   exp, log, tanh, erf   XLA's own approximations (log: Cephes range reduction + degree-8
//                         polynomial; exp: Cephes-style degree-5 polynomial with the 2^n scale
//                         clamped to [-127, 127]; tanh: Eigen's 13/6 rational function on a clamped
//                         argument; erf: 9/12 rational function).              bit-exact
//   logistic              jax.nn.sigmoid == lax.logistic, which XLA expands to 1 / (1 + exp(-x));
//                         LLVM fuses exp's final 2^n scaling with the "+ 1".   bit-exact
//   gelu                  jax.nn.gelu(x) (approximate=True):
//                         x * ((1 + tanh(sqrt(2/pi) * (x + 0.044715 x^3))) * 0.5).  bit-exact
//   sqrt, abs             correctly rounded / exact.                           bit-exact
//   rsqrt                 1 / sqrt(x) in double, rounded once (correctly rounded but for ~2^-28 of
//                         inputs).  XLA:CPU uses the hardware rsqrtss estimate plus one Newton
//                         step, whose result depends on the CPU model's estimate table (Intel and
//                         AMD differ), so no portable code can match it.  On the AMD EPYC host of
//                         the tests JAX is within 2 ulp of this (JAX's own error up to 1.70 ulp).
//   sin, cos, pow         XLA:CPU calls the C library's sinf / cosf / powf for these.  This file
//                         reimplements glibc's (2.28+, ARM optimized-routines) algorithms without
//                         branches: double-precision evaluation, Cody-Waite reduction for |x| < 120
//                         and the integer Payne-Hanek reduction beyond, table-driven log2/exp2 for
//                         powf.  Results match glibc, hence JAX on a glibc host, bit for bit in all
//                         the tests (< 0.56 ulp for sin/cos and < 0.82 ulp for pow from the
//                         correctly rounded result, glibc's documented bounds).
// The double overloads call the Kokkos (== std:: on the host, vendor libm on GPUs) functions, or
// evaluate the same formula in double (logistic, gelu, rsqrt).
//
// Fused multiply-add: XLA:CPU contracts most multiply-add pairs into FMAs.  The fused steps here
// are explicit calls to detail::fma (never left to the compiler's -ffp-contract), and the products
// XLA keeps separate that a compiler could otherwise fuse with a caller's add go through
// detail::mul_rn.
// Targets:
//   * hardware FMA (x86 with -mfma: -march=x86-64-v3 / haswell or later / native on such a CPU;
//     aarch64; CUDA/HIP/SYCL device code): fma is one instruction.  Bit-exact and fastest.
//   * x86-64 without -mfma (the compilers' default target): a call to fmaf() would be a scalar
//     library call per element and stop vectorization, so detail::fma for float is evaluated in
//     double instead (a*b is exact; the sum is rounded to double, then to float).  That double
//     rounding differs from the FMA's single rounding only if an inexact double sum lands exactly
//     halfway between two floats, probability ~2^-29 per operation: no difference in any test
//     (20 million inputs per function, plus exhaustive runs).  Define TESSEL_MATH_EXACT_SOFT_FMA
//     for a correctly rounded emulation (TwoSum; several times slower) or
//     TESSEL_MATH_UNFUSED_SOFT_FMA for plain a*b+c (about 3x faster, but up to 7 ulp from JAX for
//     tanh and erf).  sin / cos / pow use a*b+c for their double arithmetic there (and an exact
//     two-part pi/2 for the reduction, which is where glibc's FMA variant matters); no difference
//     in the tests either.  Without FMA the float polynomials cost several double operations per
//     fused step, so they run only about as fast as glibc's scalar calls: build tessel's kernels
//     with -mfma (or -march=x86-64-v3 / native) for the speed-up; the results are the same.
// Flags that matter:
//   * No -ffast-math / -funsafe-math-optimizations / -ffinite-math-only / -fno-signed-zeros:
//     they change rounding, drop the NaN / infinity selects or reassociate the exact-FMA emulation.
//   * -ffp-contract does not change any result of this header (all fusion is explicit); it does
//     change the caller's own arithmetic around these calls (XLA fuses e.g. a*x+b in a fusion).
//   * FTZ/DAZ: XLA:CPU executes with flush-to-zero and denormals-are-zero set in MXCSR, so JAX
//     never produces or consumes float subnormals (jnp.exp(-87.5) == 0, jnp.sqrt(1e-40) == 0).
//     These functions use whatever floating-point environment they run in: under FTZ+DAZ they
//     match JAX everywhere; in the default IEEE mode they differ from JAX only where an input or
//     a result is subnormal (gradual underflow instead of zero).
//   * XLA:CPU computes the elements of a short array tail (an array of 7 floats, the last 7 of 15)
//     with the C library's expf / logf / ... instead of its polynomials; JAX results for such
//     elements are glibc's, not these.  Elementwise ops fused with a reduction (softmax's
//     exp(x - max)) run through XNNPACK/YNNPACK kernels on CPU with their own exp, which differs
//     from XLA's in the last bit for ~1% of inputs.
#pragma once

#include "tessel/core/compile_pass.hpp"
#include <Kokkos_BitManipulation.hpp>
#include <Kokkos_Macros.hpp>
#include <Kokkos_MathematicalFunctions.hpp>
#include <Kokkos_NumericTraits.hpp>
#include <cstdint>

// 1 when the target executes fused multiply-add in hardware (decided per compilation pass, so a
// CUDA/HIP build uses it on the device even when the host pass does not).  May be predefined.
#ifndef TESSEL_MATH_HW_FMA
#if TESSEL_DEVICE_PASS || \
    defined(__FMA__) || defined(__aarch64__) || defined(__ARM_FEATURE_FMA) ||                     \
    (defined(_MSC_VER) && defined(__AVX2__))
#define TESSEL_MATH_HW_FMA 1
#else
#define TESSEL_MATH_HW_FMA 0
#endif
#endif

// clang honours math-errno in sqrtf() even for an argument known to be >= 0, which stops
// vectorization; its elementwise builtin has no errno (g++ drops the errno path on its own).
#if defined(__clang__) && defined(__has_builtin) && !TESSEL_CUDA_DEVICE_PASS && !TESSEL_HIP_DEVICE_PASS
#if __has_builtin(__builtin_elementwise_sqrt)
#define TESSEL_MATH_IMPL_ELEMENTWISE_SQRT 1
#endif
#endif

namespace tessel::math {

namespace detail {

template <class To, class From>
KOKKOS_FORCEINLINE_FUNCTION To bit_cast(const From& from) noexcept {
  return Kokkos::bit_cast<To>(from);
}

KOKKOS_FORCEINLINE_FUNCTION float as_float(std::uint32_t u) noexcept { return bit_cast<float>(u); }
KOKKOS_FORCEINLINE_FUNCTION std::uint32_t as_u32(float f) noexcept {
  return bit_cast<std::uint32_t>(f);
}
KOKKOS_FORCEINLINE_FUNCTION double as_double(std::uint64_t u) noexcept {
  return bit_cast<double>(u);
}
KOKKOS_FORCEINLINE_FUNCTION std::uint64_t as_u64(double d) noexcept {
  return bit_cast<std::uint64_t>(d);
}

// Branch-free select c ? a : b.  Written with masks (and bool & / | instead of && / ||) because a
// C++ ?: is a branch to the compiler at first: g++ then threads later comparisons through it,
// and the duplicated blocks hold floating-point operations it may not speculate, so the loop is
// no longer vectorizable.  Masks never become branches; the vectorizer turns them into blends.
KOKKOS_FORCEINLINE_FUNCTION std::uint32_t select(bool c, std::uint32_t a,
                                                 std::uint32_t b) noexcept {
  const std::uint32_t m = 0u - static_cast<std::uint32_t>(c);
  return (a & m) | (b & ~m);
}
KOKKOS_FORCEINLINE_FUNCTION std::int32_t select(bool c, std::int32_t a, std::int32_t b) noexcept {
  return static_cast<std::int32_t>(
      select(c, static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b)));
}
KOKKOS_FORCEINLINE_FUNCTION std::uint64_t select(bool c, std::uint64_t a,
                                                 std::uint64_t b) noexcept {
  const std::uint64_t m = std::uint64_t{0} - static_cast<std::uint64_t>(c);
  return (a & m) | (b & ~m);
}
KOKKOS_FORCEINLINE_FUNCTION float select(bool c, float a, float b) noexcept {
  return as_float(select(c, as_u32(a), as_u32(b)));
}
KOKKOS_FORCEINLINE_FUNCTION double select(bool c, double a, double b) noexcept {
  return as_double(select(c, as_u64(a), as_u64(b)));
}

// sqrt of an argument that is >= 0 or NaN (no errno path, so the loop stays vectorizable).
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T sqrt_nonneg(T x) noexcept {
#if defined(TESSEL_MATH_IMPL_ELEMENTWISE_SQRT)
  return __builtin_elementwise_sqrt(x);
#else
  return Kokkos::sqrt(x);
#endif
}

KOKKOS_FORCEINLINE_FUNCTION float fabs(float x) noexcept {
  return as_float(as_u32(x) & 0x7FFFFFFFu);
}
// copysign(1, x)
KOKKOS_FORCEINLINE_FUNCTION float sign_one(float x) noexcept {
  return as_float((as_u32(x) & 0x80000000u) | 0x3F800000u);
}

KOKKOS_FORCEINLINE_FUNCTION constexpr float inf_f32() noexcept {
  return Kokkos::Experimental::infinity_v<float>;
}

// a*b+c for float on a target without hardware FMA, evaluated in double: a*b is exact in double
// and the sum is rounded to double, then to float.  That second rounding differs from the single
// rounding of an FMA only if the exact sum is not a double (needs > 53 bits) and its double
// rounding lands exactly halfway between two floats: probability ~2^-29 per operation, never hit
// by the test sets (20 million inputs per function).  About 5x cheaper than the exact version
// below, which vectorizes into hundreds of SSE2 instructions per element.
KOKKOS_FORCEINLINE_FUNCTION float fma_via_double(float a, float b, float c) noexcept {
  return static_cast<float>(static_cast<double>(a) * static_cast<double>(b) +
                            static_cast<double>(c));
}

// Correctly rounded a*b+c without hardware FMA (define TESSEL_MATH_EXACT_SOFT_FMA to use it):
// as fma_via_double, plus TwoSum for the exact error e of the double sum s; if s lies exactly
// halfway between two floats (its 29 low significand bits are 1000...0) and e != 0, s is moved one
// double-ulp towards the exact sum before the rounding to float.  Exact for every result in
// float's normal range and for every exact-in-double sum (a subnormal float result of an
// inexact-in-double sum needs |a*b| and |c| > 2^53 apart with massive cancellation -- it does not
// occur in the polynomials here).
KOKKOS_FORCEINLINE_FUNCTION float fma_emulated(float a, float b, float c) noexcept {
  const double p = static_cast<double>(a) * static_cast<double>(b);
  const double cd = c;
  const double s = p + cd;
  const double pv = s - cd;
  const double cv = s - pv;
  const double e = (p - pv) + (cd - cv);
  const std::uint64_t u = as_u64(s);
  const bool tie = (u & 0x1FFFFFFFu) == 0x10000000u;
  const bool away = (e > 0.0) == (s > 0.0);  // |exact| > |s|
  const std::uint64_t adj =
      select(tie & (e != 0.0), select(away, std::uint64_t{1}, ~std::uint64_t{0}), std::uint64_t{0});
  return static_cast<float>(as_double(u + adj));
}

// Fused multiply-add, one rounding.
KOKKOS_FORCEINLINE_FUNCTION float fma(float a, float b, float c) noexcept {
#if TESSEL_MATH_HW_FMA
  return Kokkos::fma(a, b, c);
#elif defined(TESSEL_MATH_EXACT_SOFT_FMA)
  return fma_emulated(a, b, c);
#elif defined(TESSEL_MATH_UNFUSED_SOFT_FMA)
  return a * b + c;  // two roundings: fastest, no longer JAX's numbers (measured in the tests)
#else
  return fma_via_double(a, b, c);
#endif
}

// Multiply-add for the double-precision internals of sin / cos / pow: fused where the hardware
// has FMA (like glibc's FMA variants, which JAX uses on such CPUs), a*b+c otherwise.
KOKKOS_FORCEINLINE_FUNCTION double fmad(double a, double b, double c) noexcept {
#if TESSEL_MATH_HW_FMA
  return Kokkos::fma(a, b, c);
#else
  return a * b + c;
#endif
}

// a*b rounded to float, never contracted with a following add by the compiler (XLA keeps these
// products separate).  fma(a, b, -0) == RN(a*b) exactly, zero signs included; without hardware
// FMA the compiler cannot contract anyway.  No asm barrier: that would stop vectorization.
KOKKOS_FORCEINLINE_FUNCTION float mul_rn(float a, float b) noexcept {
#if TESSEL_CUDA_DEVICE_PASS || TESSEL_HIP_DEVICE_PASS
  return __fmul_rn(a, b);
#elif TESSEL_MATH_HW_FMA
  return Kokkos::fma(a, b, -0.0f);
#else
  return a * b;
#endif
}

// ---- exp ---------------------------------------------------------------------------------------
// XLA:CPU's exp for float32 returns y * 2^n; the parts are kept apart because XLA's fusions let
// LLVM contract the final product with a following add (logistic does).
struct ExpParts {
  float y;      // polynomial value, ~[0.7, 1.42] (NaN for NaN input)
  float scale;  // 2^n, n in [-127, 127]; 2^-127 is encoded as 0 (bits (n + 127) << 23)
};

// NonPositive: the caller guarantees x <= 0 or NaN (softmax's exp(x - max)); the clamps at the
// top, which never act then, are left out, and the result is the same.
template <bool NonPositive = false>
KOKKOS_FORCEINLINE_FUNCTION ExpParts exp_parts(float x) noexcept {
  // x = clamp(x, -87.8, 88.8), NaN passing through (XLA's fcmp uge / ule selects).
  float xc = select(x < -0x1.5f3334p+6f, -0x1.5f3334p+6f, x);
  if constexpr (!NonPositive) xc = select(xc > 0x1.633334p+6f, 0x1.633334p+6f, xc);
  // n = clamp(floor(xc * log2(e) + 0.5), -127, 127); clamping before the floor is the same for
  // integer bounds, and the float -> int conversion then stays in range (NaN -> -127: the NaN
  // still propagates through r).
  const float v = fma(xc, 0x1.715476p+0f, 0.5f);
  float vc = select(v > -127.0f, v, -127.0f);
  if constexpr (!NonPositive) vc = select(vc < 127.0f, vc, 127.0f);
  const std::int32_t ti = static_cast<std::int32_t>(vc);  // truncation
  const std::int32_t ni = ti - static_cast<std::int32_t>(static_cast<float>(ti) > vc);
  const float n = static_cast<float>(ni);
  // r = x - n * ln2 in two steps (ln2 = 0.693359375 - 2.12194440e-4).
  float r = fma(n, -0x1.63p-1f, xc);
  r = fma(n, 0x1.bd0106p-13f, r);
  float p = fma(r, 0x1.a0d2cep-13f, 0x1.6e879cp-10f);
  p = fma(p, r, 0x1.111210p-7f);
  p = fma(p, r, 0x1.555382p-5f);
  p = fma(p, r, 0x1.555554p-3f);
  p = fma(p, r, 0.5f);
  const float r2 = r * r;
  const float y = fma(p, r2, r) + 1.0f;
  const float scale = as_float(static_cast<std::uint32_t>(ni + 127) << 23);
  return {y, scale};
}

// ---- log ---------------------------------------------------------------------------------------
// XLA:CPU's log for float32 (also in tessel/runtime/random_from_bits.hpp, with branches, for erf_inv).
KOKKOS_FORCEINLINE_FUNCTION float log_core(float x) noexcept {
  const float ac = select(x > 0x1p-126f, x, 0x1p-126f);  // NaN, <= 0 and subnormals -> FLT_MIN
  const std::uint32_t b = as_u32(ac);
  const float m = as_float((b & 0x807FFFFFu) | 0x3F000000u);  // in [0.5, 1)
  const float ef = static_cast<float>(static_cast<std::int32_t>(b >> 23) - 127) + 1.0f;
  const bool lt = m < 0x1.6a09e6p-1f;  // sqrt(0.5)
  const float xr = (m - 1.0f) + select(lt, m, 0.0f);
  const float e = ef - select(lt, 1.0f, 0.0f);
  const float x2 = xr * xr;
  const float x3 = x2 * xr;
  float y = fma(xr, 0x1.204376p-4f, -0x1.d7a370p-4f);
  float y1 = fma(xr, -0x1.fcba9ep-4f, 0x1.23d37ep-3f);
  float y2 = fma(xr, 0x1.999d58p-3f, -0x1.fffff8p-3f);
  y = fma(y, xr, 0x1.de4a34p-4f);
  y1 = fma(y1, xr, -0x1.555ca0p-3f);
  y2 = fma(y2, xr, 0x1.555554p-2f);
  y = fma(y, x3, y1);
  y = fma(y, x3, y2);
  const float t = fma(y, x3, e * -0x1.bd0106p-13f);  // e * -2.12194440e-4
  const float s = fma(-0.5f, x2, xr);
  return fma(e, 0x1.63p-1f, s + t);  // e * 0.693359375
}

// ---- sin / cos (glibc's sinf / cosf) -----------------------------------------------------------
KOKKOS_FORCEINLINE_FUNCTION std::uint32_t inv_pio4(std::uint32_t i) noexcept {
  // 4/pi to 192 bits; entry i holds bits [8(i-3), 8(i-3)+32) (glibc's __inv_pio4).
  static constexpr std::uint32_t table[24] = {
      0xa2u,       0xa2f9u,     0xa2f983u,   0xa2f9836eu, 0xf9836e4eu, 0x836e4e44u,
      0x6e4e4415u, 0x4e441529u, 0x441529fcu, 0x1529fc27u, 0x29fc2757u, 0xfc2757d1u,
      0x2757d1f5u, 0x57d1f534u, 0xd1f534ddu, 0xf534ddc0u, 0x34ddc0dbu, 0xddc0db62u,
      0xc0db6295u, 0xdb629599u, 0x6295993cu, 0x95993c43u, 0x993c4390u, 0x3c439041u};
  return table[i];
}

// glibc's sinf / cosf with every branch turned into a select.  cos_ = false: sinf, true: cosf.
KOKKOS_FORCEINLINE_FUNCTION float sincos_f32(float y, bool cos_) noexcept {
  const std::uint32_t iy = as_u32(y);
  const std::uint32_t top = (iy >> 20) & 0x7FFu;  // glibc's abstop12
  const bool fast = top < 0x42Fu;                 // |y| < 120
  const double xd = y;

  // reduce_fast (x86: no round-to-int intrinsics): hpi_inv is prescaled by 2^24.  Valid for
  // |y| < 120; elsewhere fed 0 so the int conversion stays in range (the value is unused).
  const double xs = select(fast, xd, 0.0);
  const std::int32_t nf = (static_cast<std::int32_t>(xs * 0x1.45F306DC9C883p+23) + 0x800000) >> 24;
  // r = x - n * pi/2 rounded once (glibc's FMA variant, which JAX uses on FMA hosts).  Without
  // hardware FMA: pi/2 = hi + lo with hi's 46 significant bits, so n * hi (|n| <= 77) and
  // x - n * hi (Sterbenz) and n * lo are exact and the one rounding is the final subtraction.
#if TESSEL_MATH_HW_FMA
  const double rf = fmad(-static_cast<double>(nf), 0x1.921FB54442D18p0, xs);
#else
  const double rf =
      (xs - static_cast<double>(nf) * 0x1.921FB54442D00p0) - static_cast<double>(nf) * 0x1.8p-48;
#endif

  // reduce_large: a 32 x 96 -> 128 bit product with the bits of 4/pi around y's exponent; the
  // result is the exact 2.62 fixed-point fraction.  (Computed for all y, used for |y| >= 120.)
  const std::uint32_t idx = (iy >> 26) & 15u;
  const std::uint32_t shift = (iy >> 23) & 7u;
  // m << shift via a multiply (variable vector shifts need AVX2): 2^shift from the float exponent.
  const std::uint32_t pow2 =
      static_cast<std::uint32_t>(static_cast<std::int32_t>(as_float((shift + 127u) << 23)));
  const std::uint32_t m = ((iy & 0xFFFFFFu) | 0x800000u) * pow2;
  const std::uint64_t res0lo = m * inv_pio4(idx);  // 32-bit wrap-around product, as glibc
  const std::uint64_t res1 = static_cast<std::uint64_t>(m) * inv_pio4(idx + 4);
  const std::uint64_t res2 = static_cast<std::uint64_t>(m) * inv_pio4(idx + 8);
  std::uint64_t res0 = ((res2 >> 32) | (res0lo << 32)) + res1;
  const std::uint64_t nl = (res0 + (std::uint64_t{1} << 61)) >> 62;
  res0 -= nl << 62;
  // (double)(int64_t)res0 from two 32-bit halves (one rounding, as the direct conversion; avoids
  // a 64-bit int -> double conversion, which x86 has only with AVX-512DQ).
  const auto hi32 = static_cast<std::int32_t>(static_cast<std::uint32_t>(res0 >> 32));
  const auto lo32 = static_cast<std::int32_t>(static_cast<std::uint32_t>(res0) ^ 0x80000000u);
  const double hi = static_cast<double>(hi32);
  const double lo = static_cast<double>(lo32) + 0x1p31;  // the unsigned low half, exact
  const double rl = fmad(hi, 0x1p32, lo) * 0x1.921FB54442D18p-62;  // hi * 2^32 is exact
  const std::uint32_t sgn = iy >> 31;

  // Quadrant bookkeeping: parity (which polynomial) and q (sign of the sine / cosine).
  const std::uint32_t n =
      select(fast, static_cast<std::uint32_t>(nf), static_cast<std::uint32_t>(nl));
  const std::uint32_t q = select(fast, n, n + sgn);
  const double r = select(fast, rf, rl);
  // glibc's sign[q & 3] = {1, -1, -1, 1}: a sign bit from bit 1 of q + 1
  const double sq = as_double(as_u64(1.0) | (static_cast<std::uint64_t>((q + 1u) & 2u) << 62));
  // all ones when the cosine polynomial is used (built arithmetically: g++ cannot vectorize a
  // bool made from an integer bit and widened to a 64-bit mask)
  const std::uint64_t odd = std::uint64_t{0} - ((n ^ static_cast<std::uint32_t>(cos_)) & 1u);

  // sinf_poly, both branches.  The sine polynomial takes x * sign, the cosine one x * x.
  const double xx = r * sq;
  const double x2 = r * r;
  const double x3 = xx * x2;
  const double s1 = fmad(x2, -0x1.994eb3774cf24p-13, 0x1.1107605230bc4p-7);
  const double x7 = x3 * x2;
  const double s = fmad(x3, -0x1.555545995a603p-3, xx);
  const double sinp = fmad(x7, s1, s);
  const double x4 = x2 * x2;
  const double c2 = fmad(x2, 0x1.99343027bf8c3p-16, -0x1.6c087e89a359dp-10);
  const double c1 = fmad(x2, -0x1.ffffffd0c621cp-2, 0x1p0);
  const double x6 = x4 * x2;
  const double c = fmad(x4, 0x1.55553e1068f19p-5, c1);
  const double cosp = fmad(x6, c2, c);
  // The second glibc table negates the cosine coefficients: the same as negating the result.
  const double cosq = as_double(as_u64(cosp) ^ (static_cast<std::uint64_t>(q & 2u) << 62));
  const double res = as_double((as_u64(cosq) & odd) | (as_u64(sinp) & ~odd));
  float out = static_cast<float>(res);
  // |y| < 2^-12: sinf returns y, cosf 1 (same values as the polynomial, but no arithmetic on
  // subnormals, which matters under FTZ); inf / NaN -> NaN as glibc's (y - y) / (y - y).
  out = select(top < 0x398u, select(cos_, 1.0f, y), out);
  out = select(top >= 0x7F8u, (y - y) / (y - y), out);
  return out;
}

// ---- pow (glibc's powf) -------------------------------------------------------------------------
// glibc's __powf_log2_data.tab as two arrays (a 16-byte stride is no valid gather scale).
KOKKOS_FORCEINLINE_FUNCTION double powf_log2_invc(std::uint64_t i) noexcept {
  static constexpr double table[16] = {0x1.661ec79f8f3bep+0, 0x1.571ed4aaf883dp+0,
                                       0x1.49539f0f010bp+0,  0x1.3c995b0b80385p+0,
                                       0x1.30d190c8864a5p+0, 0x1.25e227b0b8eap+0,
                                       0x1.1bb4a4a1a343fp+0, 0x1.12358f08ae5bap+0,
                                       0x1.0953f419900a7p+0, 0x1p+0,
                                       0x1.e608cfd9a47acp-1, 0x1.ca4b31f026aap-1,
                                       0x1.b2036576afce6p-1, 0x1.9c2d163a1aa2dp-1,
                                       0x1.886e6037841edp-1, 0x1.767dcf5534862p-1};
  return table[i];
}
KOKKOS_FORCEINLINE_FUNCTION double powf_log2_logc(std::uint64_t i) noexcept {
  static constexpr double table[16] = {-0x1.efec65b963019p-2, -0x1.b0b6832d4fca4p-2,
                                       -0x1.7418b0a1fb77bp-2, -0x1.39de91a6dcf7bp-2,
                                       -0x1.01d9bf3f2b631p-2, -0x1.97c1d1b3b7afp-3,
                                       -0x1.2f9e393af3c9fp-3, -0x1.960cbbf788d5cp-4,
                                       -0x1.a6f9db6475fcep-5, 0x0p+0,
                                       0x1.338ca9f24f53dp-4,  0x1.476a9543891bap-3,
                                       0x1.e840b4ac4e4d2p-3,  0x1.40645f0c6651cp-2,
                                       0x1.88e9c2c1b9ff8p-2,  0x1.ce0a44eb17bccp-2};
  return table[i];
}

KOKKOS_FORCEINLINE_FUNCTION std::uint64_t exp2f_tab(std::uint64_t i) noexcept {
  // tab[i] = uint(2^(i/32)) - (i << 47)
  static constexpr std::uint64_t table[32] = {
      0x3ff0000000000000u, 0x3fefd9b0d3158574u, 0x3fefb5586cf9890fu, 0x3fef9301d0125b51u,
      0x3fef72b83c7d517bu, 0x3fef54873168b9aau, 0x3fef387a6e756238u, 0x3fef1e9df51fdee1u,
      0x3fef06fe0a31b715u, 0x3feef1a7373aa9cbu, 0x3feedea64c123422u, 0x3feece086061892du,
      0x3feebfdad5362a27u, 0x3feeb42b569d4f82u, 0x3feeab07dd485429u, 0x3feea47eb03a5585u,
      0x3feea09e667f3bcdu, 0x3fee9f75e8ec5f74u, 0x3feea11473eb0187u, 0x3feea589994cce13u,
      0x3feeace5422aa0dbu, 0x3feeb737b0cdc5e5u, 0x3feec49182a3f090u, 0x3feed503b23e255du,
      0x3feee89f995ad3adu, 0x3feeff76f2fb5e47u, 0x3fef199bdd85529cu, 0x3fef3720dcef9069u,
      0x3fef5818dcfba487u, 0x3fef7c97337b9b5fu, 0x3fefa4afa2a490dau, 0x3fefd0765b6e4540u};
  return table[i];
}

// log2(x) for the bits of a positive normal x (subnormals pre-normalized to a negative exponent).
KOKKOS_FORCEINLINE_FUNCTION double powf_log2(std::uint32_t ix) noexcept {
  const std::uint32_t tmp = ix - 0x3f330000u;
  const std::uint64_t i = (tmp >> 19) % 16u;  // 64-bit: gathers of doubles need 64-bit indices
  const std::uint32_t top = tmp & 0xff800000u;
  const std::uint32_t iz = ix - top;
  const std::int32_t k = static_cast<std::int32_t>(top) >> 23;
  const double z = as_float(iz);
  const double r = fmad(z, powf_log2_invc(i), -1.0);
  const double y0 = powf_log2_logc(i) + static_cast<double>(k);
  const double r2 = r * r;
  double y = fmad(0x1.27616c9496e0bp-2, r, -0x1.71969a075c67ap-2);
  const double p = fmad(0x1.ec70a6ca7baddp-2, r, -0x1.7154748bef6c8p-1);
  const double r4 = r2 * r2;
  double q = fmad(0x1.71547652ab82bp0, r, y0);
  q = fmad(p, r2, q);
  y = fmad(y, r4, q);
  return y;
}

// 2^xd with the sign bit set by sign_bias (1 << 16); xd in [-1021, 1023] for a meaningful result.
KOKKOS_FORCEINLINE_FUNCTION double powf_exp2(double xd, std::uint64_t sign_bias) noexcept {
  constexpr double shift = 0x1.8p+52 / 32;
  double kd = xd + shift;
  const std::uint64_t ki = as_u64(kd);
  kd -= shift;
  const double r = xd - kd;
  std::uint64_t t = exp2f_tab(ki % 32u);
  t += (ki + sign_bias) << 47;
  const double s = as_double(t);
  const double z = fmad(0x1.c6af84b912394p-5, r, 0x1.ebfce50fac4f3p-3);
  const double r2 = r * r;
  double y = fmad(0x1.62e42ff0c52d6p-1, r, 1.0);
  y = fmad(z, r2, y);
  return y * s;
}

}  // namespace detail

// =================================================================================================
// float

// |x|
KOKKOS_FORCEINLINE_FUNCTION float abs(float x) noexcept { return detail::fabs(x); }

// jnp.exp: XLA's polynomial.  exp(x) = +inf for x > 88.72..., 0 for x < -87.68 (XLA's 2^n scale
// bottoms out at 2^-127 == 0: no subnormal results below that), NaN -> NaN.
KOKKOS_FORCEINLINE_FUNCTION float exp(float x) noexcept {
  const detail::ExpParts e = detail::exp_parts(x);
  return detail::mul_rn(e.y, e.scale);
}

// exp for arguments known to be <= 0 (or NaN), as softmax's exp(x - max) is: the same results
// as exp() there, with fewer instructions.
KOKKOS_FORCEINLINE_FUNCTION float exp_nonpositive(float x) noexcept {
  const detail::ExpParts e = detail::exp_parts<true>(x);
  return detail::mul_rn(e.y, e.scale);
}
KOKKOS_FORCEINLINE_FUNCTION double exp_nonpositive(double x) noexcept { return Kokkos::exp(x); }

// jnp.log: XLA's polynomial.  log(+-0) = -inf, log(x < 0) = NaN, log(+inf) = +inf, NaN -> NaN.
// Subnormal x is treated as FLT_MIN (log = -87.3365...); under DAZ (as in JAX) it is 0 -> -inf.
KOKKOS_FORCEINLINE_FUNCTION float log(float x) noexcept {
  const std::uint32_t r = detail::as_u32(detail::log_core(x));
  const std::uint32_t nan_mask = 0u - static_cast<std::uint32_t>(!(x > 0.0f));  // x <= 0, NaN
  std::uint32_t out = r | nan_mask;
  out = detail::select(x == detail::inf_f32(), 0x7F800000u, out);
  out = detail::select(x == 0.0f, 0xFF800000u, out);
  return detail::as_float(out);
}

// jnp.tanh: XLA's rational approximation on x clamped to +-7.99881172; |x| < 0.0004 -> x,
// |x| >= 20 -> +-1, NaN -> NaN.
KOKKOS_FORCEINLINE_FUNCTION float tanh(float x) noexcept {
  using detail::fma;
  const float ax = detail::fabs(x);
  float xc = detail::select(x < -0x1.ffec88p+2f, -0x1.ffec88p+2f, x);
  xc = detail::select(xc > 0x1.ffec88p+2f, 0x1.ffec88p+2f, xc);
  const float x2 = xc * xc;
  float p = fma(x2, -0x1.3e4b80p-52f, 0x1.c266fcp-43f);
  p = fma(x2, p, -0x1.7a6ffep-34f);
  p = fma(x2, p, 0x1.b80082p-25f);
  p = fma(x2, p, 0x1.f28694p-17f);
  p = fma(x2, p, 0x1.4e1bdap-11f);
  p = fma(x2, p, 0x1.40b3b8p-8f);
  p = xc * p;
  float q = fma(x2, 0x1.41a7b0p-20f, 0x1.f12bacp-14f);
  q = fma(x2, q, 0x1.29540ap-9f);
  q = fma(x2, q, 0x1.40b3bap-8f);
  float r = p / q;
  r = detail::select(ax < 0x1.a36e2ep-12f, x, r);
  r = detail::select(ax >= 20.0f, detail::sign_one(x), r);
  return r;
}

// jax.scipy.special.erf / lax.erf: XLA's rational approximation x P(x^2) / Q(x^2);
// |x| >= 3.8325 -> +-1, NaN -> NaN.
KOKKOS_FORCEINLINE_FUNCTION float erf(float x) noexcept {
  using detail::fma;
  const float x2 = x * x;
  float p = fma(x2, 0x1.e05aa2p-13f, 0x1.bebb44p-9f);
  p = fma(x2, p, 0x1.a16dd6p-5f);
  p = fma(x2, p, 0x1.7b4e80p-3f);
  p = fma(x2, p, 0x1.20dd74p+0f);
  const float num = x * p;
  float q = fma(x2, -0x1.fa720cp-24f, 0x1.8b11bep-16f);
  q = fma(x2, q, 0x1.0ada50p-10f);
  q = fma(x2, q, 0x1.cd0fa8p-7f);
  q = fma(x2, q, 0x1.c69842p-4f);
  q = fma(x2, q, 0x1.fd6894p-2f);
  q = fma(x2, q, 1.0f);
  const float r = num / q;
  return detail::select(detail::fabs(x) >= 0x1.ea8f96p+1f, detail::sign_one(x), r);
}

// jax.nn.sigmoid / lax.logistic: 1 / (1 + exp(-x)) with exp's last multiply fused into the add,
// as XLA:CPU evaluates it.  -> 0 for x < -88.8 (and subnormal results just above), 1 for large x.
KOKKOS_FORCEINLINE_FUNCTION float logistic(float x) noexcept {
  const detail::ExpParts e = detail::exp_parts(-x);
  return 1.0f / detail::fma(e.y, e.scale, 1.0f);
}

// jax.nn.gelu(x) with the default approximate=True:
//   x * ((1 + tanh(0.7978845608 * (x + 0.044715 x^3))) * 0.5), x^3 = (x * x) * x,
// the inner x + 0.044715 x^3 fused (as XLA does).
KOKKOS_FORCEINLINE_FUNCTION float gelu(float x) noexcept {
  const float x3 = (x * x) * x;
  const float inner = detail::fma(x3, 0x1.6e4e26p-5f, x);
  const float t = tanh(inner * 0x1.988454p-1f);
  return detail::mul_rn(x, (t + 1.0f) * 0.5f);
}

// Correctly rounded square root; sqrt(-0) = -0, sqrt(x < 0) = NaN.  (Written as sqrt(|x|) plus a
// select so that compilers with math-errno on -- the default -- still vectorize it.)
KOKKOS_FORCEINLINE_FUNCTION float sqrt(float x) noexcept {
  const float s = detail::sqrt_nonneg(Kokkos::fabs(x));  // known >= 0: no errno branch
  const float r = detail::as_float(detail::as_u32(s) | (detail::as_u32(x) & 0x80000000u));
  return detail::select(x < 0.0f, detail::as_float(0xFFC00000u), r);
}

// 1 / sqrt(x) evaluated in double and rounded once to float: the correctly rounded result except
// with probability ~2^-28 (double rounding).  XLA:CPU's rsqrt is the CPU's rsqrtss estimate plus a
// Newton step (see the header comment); it is within 2 ulp of this.
// rsqrt(+0) = +inf, rsqrt(-0) = -inf, rsqrt(x < 0) = NaN, rsqrt(+inf) = 0.
KOKKOS_FORCEINLINE_FUNCTION float rsqrt(float x) noexcept {
  const double d = x;
  const double s = detail::sqrt_nonneg(Kokkos::fabs(d));  // |d|: no errno path
  const double r = 1.0 / detail::select((detail::as_u32(x) >> 31) != 0, -s, s);  // rsqrt(-0) = -inf
  return detail::select(x < 0.0f, detail::as_float(0xFFC00000u), static_cast<float>(r));
}

// glibc sinf / cosf (what XLA:CPU calls): < 0.56 ulp; NaN for +-inf and NaN.
KOKKOS_FORCEINLINE_FUNCTION float sin(float x) noexcept { return detail::sincos_f32(x, false); }
KOKKOS_FORCEINLINE_FUNCTION float cos(float x) noexcept { return detail::sincos_f32(x, true); }

// glibc powf (what XLA:CPU calls): < 0.82 ulp, C99 Annex F special cases
// (pow(x, +-0) = 1, pow(1, y) = 1, pow(-1, +-inf) = 1, pow(x < 0, non-integer) = NaN, ...).
KOKKOS_FORCEINLINE_FUNCTION float pow(float x, float y) noexcept {
  using detail::as_float;
  using detail::as_u32;
  using detail::select;
  const std::uint32_t ix = as_u32(x);
  const std::uint32_t iy = as_u32(y);

  // glibc's checkint(iy): 0 not an integer, 1 odd integer, 2 even integer (y finite, nonzero).
  // |y| < 1 (bit test: no float compare on subnormals, which DAZ would turn into 0): not an
  // integer; |y| >= 2^24: an even integer; otherwise compare y with its truncation.
  const std::uint32_t iya = iy & 0x7FFFFFFFu;
  const bool ybig = iya >= 0x4B800000u;
  const bool ysmall = iya < 0x3F800000u;
  const float yc = select(ybig | ysmall, 0.0f, y);
  const std::int32_t yi = static_cast<std::int32_t>(yc);
  const bool ytrunc = static_cast<float>(yi) == yc;
  const bool yisint = ybig | (!ysmall & ytrunc);
  const bool yodd = !ybig & !ysmall & ytrunc & ((yi & 1) != 0);

  // Main path: x finite nonzero (negative x with integer y: |x| and a sign bias), y finite nonzero.
  const bool xneg = (ix >> 31) != 0;
  const bool flip = xneg & yodd;  // result negative
  const std::uint64_t sign_bias = static_cast<std::uint64_t>(flip) << 16;
  const std::uint32_t ixa = ix & 0x7FFFFFFFu;
  const std::uint32_t ixs = (as_u32(x * 0x1p23f) & 0x7FFFFFFFu) - (23u << 23);  // subnormal x
  const std::uint32_t ixm = select(ixa < 0x00800000u, ixs, ixa);
  const double logx = detail::powf_log2(ixm);
  const double ylogx = static_cast<double>(y) * logx;
  const float main = static_cast<float>(detail::powf_exp2(ylogx, sign_bias));
  const std::uint32_t rsign = static_cast<std::uint32_t>(flip) << 31;
  float r = main;
  // __math_may_uflowf: +-0x1.4p-75f * 0x1.4p-75f = +-2^-149, multiplied at run time like glibc
  // (so that it flushes to 0 under FTZ as in JAX).
  r = select(ylogx < -149.0, as_float(rsign | 0x1A200000u) * 0x1.4p-75f, r);
  r = select(ylogx <= -150.0, as_float(rsign), r);  // __math_uflowf: +-0
  r = select(ylogx > 0x1.fffffffd1d571p+6, as_float(rsign | 0x7F800000u), r);  // __math_oflowf

  // x negative finite nonzero, y not an integer: NaN.
  r = select(xneg & !yisint, (x - x) / (x - x), r);

  // x is +-0, +-inf or NaN (y finite nonzero).
  const bool x_zin = 2u * ix - 1u >= 2u * 0x7F800000u - 1u;
  const bool yneg = (iy >> 31) != 0;
  const float x2 = as_float(as_u32(x * x) ^ rsign);
  float rx = select(yneg, 1.0f / x2, x2);
  rx = select((2u * ix == 0u) & yneg, as_float(rsign | 0x7F800000u), rx);  // __math_divzerof
  r = select(x_zin, rx, r);

  // y is +-0, +-inf or NaN.
  const bool y_zin = 2u * iy - 1u >= 2u * 0x7F800000u - 1u;
  const bool xsig = 2u * (ix ^ 0x00400000u) > 2u * 0x7FC00000u;  // signaling NaN
  const bool ysig = 2u * (iy ^ 0x00400000u) > 2u * 0x7FC00000u;
  float ry = y * y;  // +inf: |x| < 1 with y = -inf or |x| > 1 with y = +inf
  const float xpy = x + y;
  ry = select((2u * ix < 2u * 0x3F800000u) == !yneg, 0.0f, ry);
  ry = select(2u * ix == 2u * 0x3F800000u, 1.0f, ry);  // x = -1, y = +-inf
  ry = select((2u * ix > 2u * 0x7F800000u) | (2u * iy > 2u * 0x7F800000u), xpy, ry);
  ry = select(ix == 0x3F800000u, select(ysig, xpy, 1.0f), ry);
  ry = select(2u * iy == 0u, select(xsig, xpy, 1.0f), ry);
  r = select(y_zin, ry, r);
  return r;
}

// =================================================================================================
// double: the Kokkos / C library functions (correctness first), or the same formula in double.

KOKKOS_FORCEINLINE_FUNCTION double abs(double x) noexcept { return Kokkos::fabs(x); }
KOKKOS_FORCEINLINE_FUNCTION double exp(double x) noexcept { return Kokkos::exp(x); }
KOKKOS_FORCEINLINE_FUNCTION double log(double x) noexcept { return Kokkos::log(x); }
KOKKOS_FORCEINLINE_FUNCTION double tanh(double x) noexcept { return Kokkos::tanh(x); }
KOKKOS_FORCEINLINE_FUNCTION double erf(double x) noexcept { return Kokkos::erf(x); }
KOKKOS_FORCEINLINE_FUNCTION double logistic(double x) noexcept {
  return 1.0 / (1.0 + Kokkos::exp(-x));
}
KOKKOS_FORCEINLINE_FUNCTION double gelu(double x) noexcept {
  const double inner = x + 0.044715 * ((x * x) * x);
  return x * ((Kokkos::tanh(0.7978845608028654 * inner) + 1.0) * 0.5);
}
KOKKOS_FORCEINLINE_FUNCTION double sqrt(double x) noexcept { return Kokkos::sqrt(x); }
KOKKOS_FORCEINLINE_FUNCTION double rsqrt(double x) noexcept { return 1.0 / Kokkos::sqrt(x); }
KOKKOS_FORCEINLINE_FUNCTION double sin(double x) noexcept { return Kokkos::sin(x); }
KOKKOS_FORCEINLINE_FUNCTION double cos(double x) noexcept { return Kokkos::cos(x); }
KOKKOS_FORCEINLINE_FUNCTION double pow(double x, double y) noexcept { return Kokkos::pow(x, y); }

}  // namespace tessel::math
