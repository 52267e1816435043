#pragma once
// A product the compiler may not contract with a following add into an FMA: where a value is
// computed once and read by several consumers (XLA's multi-use products, a mean's scaled sum that
// a fused kernel keeps per row), each consumer must see the same rounded product whether or not
// the compiler sees the add beside it.
#include "tessel/core/compile_pass.hpp"
#include <concepts>

#include <Kokkos_Macros.hpp>

namespace tessel {

// a * b rounded to T, in a way the compiler cannot contract with a following add into an FMA.
// g++ on x86 does not fuse a multi-use product even with -ffp-contract=fast, but LLVM's GPU
// targets (aggressive FMA fusion) and other compilers may, so the barrier is kept everywhere.
template <std::floating_point T>
KOKKOS_INLINE_FUNCTION T no_contract_mul(T a, T b) noexcept {
#if TESSEL_CUDA_DEVICE_PASS || TESSEL_HIP_DEVICE_PASS
  if constexpr (sizeof(T) == 4) return __fmul_rn(a, b);
  else return __dmul_rn(a, b);
#elif TESSEL_SYCL_DEVICE_PASS
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

// v, which the compiler may no longer contract with the operation that consumes it: an operand of a
// reduction's combine (a sum of squares' add) then stays the product it was rounded to, whether or
// not the kernel inlines the product beside the add, as in XLA. Other types pass unchanged.
template <class T>
KOKKOS_FORCEINLINE_FUNCTION T rounded_operand(T v) noexcept {
  if constexpr (std::same_as<T, float> || std::same_as<T, double>) {
#if TESSEL_CUDA_DEVICE_PASS
    if constexpr (sizeof(T) == 4) asm("mov.b32 %0, %0;" : "+f"(v));
    else asm("mov.b64 %0, %0;" : "+d"(v));
#elif TESSEL_HIP_DEVICE_PASS || TESSEL_SYCL_DEVICE_PASS
    volatile T p = v;
    v = p;
#elif (defined(__GNUC__) || defined(__clang__)) && (defined(__x86_64__) || defined(__SSE2__))
    __asm__("" : "+x"(v));
#elif (defined(__GNUC__) || defined(__clang__)) && defined(__aarch64__)
    __asm__("" : "+w"(v));
#else
    volatile T p = v;
    v = p;
#endif
  }
  return v;
}

}  // namespace tessel
