#pragma once
// Device backends (GPUs), and CPU builds that test their shapes: a work item is one element (or a
// team's share of a row), so that neighbouring threads touch neighbouring memory; each logical
// device's kernels go to its own execution-space instance; no memory hints.
#include "tessel/core/compile_pass.hpp"
#include <cstddef>
#include <cstdint>

#include <Kokkos_Core.hpp>

namespace tessel::backend {

// Each device's kernels run on its own instance (stream), so devices overlap.
inline constexpr bool one_kernel_for_all_devices = false;
// Every kernel is launched, however small.
inline constexpr std::int64_t inline_kernel_work = 0;
inline constexpr std::int64_t combine_tile = 1;

// One instantiation per region on a GPU: a GPU thread gains nothing from unit-stride or all-fused
// rows compiled apart, and every instantiation is a kernel for nvcc to compile. A CPU build of these
// shapes keeps them (they vectorize its loops; the values and their order are the same).
#if TESSEL_GPU_COMPILER
inline constexpr bool specializes_rows = false;
#else
inline constexpr bool specializes_rows = true;
#endif
// A row's members share it, so no member may store the row in the output for itself (the row cache)
// or keep per-row values in thread storage (the row memo).
inline constexpr bool caches_rows = false;
inline constexpr bool memoizes_rows = false;

KOKKOS_FORCEINLINE_FUNCTION void prefetch(void const*) {}
KOKKOS_FORCEINLINE_FUNCTION void prefetch_for_write(void const*) {}

// No row memo: a GPU's rows begin in many threads at once, with no per-thread place to leave a
// value between them (each reduction computes its own).
inline constexpr int row_memo_slots = 0;
template <class C>
KOKKOS_FORCEINLINE_FUNCTION bool row_memo_read(std::int8_t, C&) {
  return false;
}
template <class C>
KOKKOS_FORCEINLINE_FUNCTION void row_memo_write(std::int8_t, C) {}

}  // namespace tessel::backend
