#pragma once
// Host backends: every logical device shares the host's thread pool, a work item is a chunk of
// contiguous elements that one core's vector units go through, and the memory system takes hints
// (prefetches; copies' non-temporal stores are their copy shape's, backend/host/copy_shape.hpp).
#include <cstddef>
#include <cstdint>

#include <Kokkos_Core.hpp>

namespace tessel::backend {

// The devices share one thread pool: a collective's copies for every member go in one kernel.
inline constexpr bool one_kernel_for_all_devices = true;
// Below this many elements of work a kernel runs inline on the calling thread: waking the pool
// costs more than the work (a jitted step over 8 elements on 8 devices would pay 8 wake-ups).
inline constexpr std::int64_t inline_kernel_work = 1 << 14;
// Elements a collective's work item combines in a local buffer, so that loops over members vectorize.
inline constexpr std::int64_t combine_tile = 4096;

// Kernels are instantiated apart for rows that every leaf walks with stride 1 and for regions
// whose reductions are all row-fused: those loops then vectorize.
inline constexpr bool specializes_rows = true;
// A row-fused kernel whose reductions read the chain it writes computes the chain once per element
// (runtime/row_cache.hpp), and equal row-fused reductions of one kernel reduce a row once (the row
// memo below): a row belongs to one thread.
inline constexpr bool caches_rows = true;
inline constexpr bool memoizes_rows = true;

KOKKOS_FORCEINLINE_FUNCTION void prefetch(void const* p) { __builtin_prefetch(p); }
KOKKOS_FORCEINLINE_FUNCTION void prefetch_for_write(void const* p) { __builtin_prefetch(p, 1); }

}  // namespace tessel::backend

namespace tessel::detail {

// Per-row values shared by the row-fused reductions of one kernel that compute the same value
// (LayerNorm's mean, once in (x - mean) and again inside var): the first, in begin_row order,
// computes it and leaves it here; the others read it (kernel_eval.hpp's ReduceEval, slots assigned
// by RowMemo in region_binder.hpp). Per host thread, as each thread begins its rows one at a time.
template <class T>
inline thread_local T row_memo[16];

}  // namespace tessel::detail

namespace tessel::backend {

// The row memo's slots (0: none; the binder assigns none then).
inline constexpr int row_memo_slots = 16;
// A reduction's value left by an earlier equal one of the same row, from slot `slot` (-1: none).
template <class C>
KOKKOS_FORCEINLINE_FUNCTION bool row_memo_read(std::int8_t slot, C& value) {
  if (slot < 0) return false;
  value = detail::row_memo<C>[slot];
  return true;
}
// Leaves a reduction's value for the equal ones after it, in slot `slot` (-1: none).
template <class C>
KOKKOS_FORCEINLINE_FUNCTION void row_memo_write(std::int8_t slot, C value) {
  if (slot >= 0) detail::row_memo<C>[slot] = value;
}

}  // namespace tessel::backend
