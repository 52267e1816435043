#pragma once
// A product the compiler may not contract with a following add into an FMA: where a value is
// computed once and read by several consumers (XLA's multi-use products, a mean's scaled sum that
// a fused kernel keeps per row), each consumer must see the same rounded product whether or not
// the compiler sees the add beside it.
#include <concepts>

#include <Kokkos_Macros.hpp>

namespace tessel {

// a * b rounded to T, in a way the compiler cannot contract with a following add into an FMA.
// g++ on x86 does not fuse a multi-use product even with -ffp-contract=fast, but LLVM's GPU
// targets (aggressive FMA fusion) and other compilers may, so the barrier is kept everywhere.
template <std::floating_point T>
KOKKOS_INLINE_FUNCTION T no_contract_mul(T a, T b) noexcept {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  if constexpr (sizeof(T) == 4) return __fmul_rn(a, b);
  else return __dmul_rn(a, b);
#elif defined(__SYCL_DEVICE_ONLY__)
  volatile T p = a * b;
  return p;
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__SSE2__))
  T p = a * b;
  __asm__("" : "+x"(p));
  return p;
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
  T p = a * b;
  __asm__("" : "+w"(p));
  return p;
#else
  volatile T p = a * b;
  return p;
#endif
}

}  // namespace tessel
