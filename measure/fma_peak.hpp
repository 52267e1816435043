#pragma once
// The machine's float32 FMA peak, measured in the binary that uses it (a benchmark, tessel_study):
// every host thread runs independent chains of vector FMAs (enough of them to cover the FMA latency
// on every port), with 256-bit AVX2 or 512-bit AVX-512. A GEMM's fraction_of_peak is taken against
// the peak of the vector width its kernels use (OpenBLAS's core type: an OPENBLAS_CORETYPE=Haswell
// machine runs AVX2 kernels even on an AVX-512 CPU; or oneDNN's, where it runs float32 GEMMs:
// BlasInfo::f32_vector_bits), timed interleaved with the GEMMs so that a busy machine slows both
// alike.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include <Kokkos_Core.hpp>

namespace tessel::measure {

namespace detail {

// Each call: iters x chains FMAs of `lanes` floats, 2 flops each.
__attribute__((target("avx2,fma"))) inline float fma_chains_avx2(std::int64_t iters) {
  constexpr int chains = 12;  // of 16 ymm registers; covers 4-cycle latency on 2-3 FMA ports
  __m256 acc[chains];
  for (int j = 0; j < chains; ++j) acc[j] = _mm256_set1_ps(0.5f + 0.01f * static_cast<float>(j));
  __m256 const x = _mm256_set1_ps(0.999999f), y = _mm256_set1_ps(1e-6f);
  for (std::int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < chains; ++j) acc[j] = _mm256_fmadd_ps(acc[j], x, y);
  }
  __m256 s = acc[0];
  for (int j = 1; j < chains; ++j) s = _mm256_add_ps(s, acc[j]);
  return _mm256_cvtss_f32(s);
}

__attribute__((target("avx512f"))) inline float fma_chains_avx512(std::int64_t iters) {
  constexpr int chains = 24;  // of 32 zmm registers
  __m512 acc[chains];
  for (int j = 0; j < chains; ++j) acc[j] = _mm512_set1_ps(0.5f + 0.01f * static_cast<float>(j));
  __m512 const x = _mm512_set1_ps(0.999999f), y = _mm512_set1_ps(1e-6f);
  for (std::int64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 24
    for (int j = 0; j < chains; ++j) acc[j] = _mm512_fmadd_ps(acc[j], x, y);
  }
  __m512 s = acc[0];
  for (int j = 1; j < chains; ++j) s = _mm512_add_ps(s, acc[j]);
  return _mm512_reduce_add_ps(s);
}

}  // namespace detail

// One of the FMA kernels, run by every host thread at once.
struct FmaKernel {
  float (*chains)(std::int64_t iters) = nullptr;
  int chains_per_iter = 0, lanes = 0;
  std::int64_t iters = 1 << 16;
  char const* isa = "none";

  double flops() const { return 2.0 * lanes * chains_per_iter * static_cast<double>(iters) * threads(); }
  static int threads() { return Kokkos::DefaultHostExecutionSpace().concurrency(); }
  void operator()() const {
    using Host = Kokkos::DefaultHostExecutionSpace;
    Kokkos::View<float*, Kokkos::HostSpace> sink("fma_peak_sink", threads());
    auto f = chains;
    auto n = iters;
    Kokkos::parallel_for("tessel::measure::fma_peak", Kokkos::RangePolicy<Host>(0, threads()),
                         [=](int t) { sink(t) = f(n); });
    Kokkos::fence();
  }
  // Grows iters until one run takes about `seconds`; returns the GFLOP/s of the best of a few runs.
  double calibrate(double seconds = 0.05) {
    double best = 0;
    for (int trial = 0; trial < 5;) {
      auto t0 = std::chrono::steady_clock::now();
      (*this)();
      double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (s < seconds) {
        iters = static_cast<std::int64_t>(static_cast<double>(iters) * std::min(16.0, 1.2 * seconds / std::max(s, 1e-6)));
        continue;
      }
      best = std::max(best, flops() / s / 1e9);
      ++trial;
    }
    return best;
  }
  // Calibrates one run to last about as long as one call of `op` (after a warm-up call), between
  // 1 and 50 ms: timed interleaved with it, the peak then costs each iteration about what the
  // operation does, instead of 50 ms beside a GPU's 1 ms call.
  template <class Op>
  double calibrate_like(Op&& op) {
    op();
    Kokkos::fence();
    auto t0 = std::chrono::steady_clock::now();
    op();
    Kokkos::fence();
    double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return calibrate(std::clamp(s, 0.001, 0.05));
  }
};

// (hipcc's device passes also read these host-only functions, and reject x86's CPU builtins there:
// nothing of them is compiled for the GPU.)
inline FmaKernel avx2_fma() {
#if !defined(__HIP_DEVICE_COMPILE__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return {};
#endif
  return FmaKernel{detail::fma_chains_avx2, 12, 8, 1 << 16, "avx2"};
}
inline FmaKernel avx512_fma() {
#if !defined(__HIP_DEVICE_COMPILE__)
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx512f")) return {};
#endif
  return FmaKernel{detail::fma_chains_avx512, 24, 16, 1 << 16, "avx512"};
}

// The widest vector FMAs this CPU runs (AVX-512, else AVX2; none: chains is null).
inline FmaKernel widest_fma() {
  if (auto k = avx512_fma(); k.chains) return k;
  return avx2_fma();
}

// The FMA kernel of the vector width float32 GEMMs run at (detail::blas_info().f32_vector_bits;
// AVX2 when it is not 512).
inline FmaKernel gemm_fma(int f32_vector_bits) {
  if (f32_vector_bits >= 512) {
    if (auto k = avx512_fma(); k.chains) return k;
  }
  return avx2_fma();
}

}  // namespace tessel::measure
