#pragma once
// Host backends: every logical device shares the host's thread pool, a work item is a chunk of
// contiguous elements that one core's vector units go through, and the memory system takes hints
// (prefetches, non-temporal stores for outputs larger than the caches).
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <Kokkos_Core.hpp>

#include "tessel/runtime/backend/host/stream_copy.hpp"
#include "tessel/runtime/run_plan.hpp"

namespace tessel::backend {

// The devices share one thread pool: a collective's copies for every member go in one kernel.
inline constexpr bool one_kernel_for_all_devices = true;
// Below this many elements of work a kernel runs inline on the calling thread: waking the pool
// costs more than the work (a jitted step over 8 elements on 8 devices would pay 8 wake-ups).
inline constexpr std::int64_t inline_kernel_work = 1 << 14;
// Elements a collective's work item combines in a local buffer, so that loops over members vectorize.
inline constexpr std::int64_t combine_tile = 4096;
// Elements a copy's work item moves (read once from cache for every destination).
inline constexpr std::int64_t copy_chunk = detail::run_chunk;

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

// Whether copies with this many output bytes (all destinations together) write around the caches.
constexpr bool streams(std::size_t output_bytes) { return output_bytes >= detail::stream_output_bytes; }

// dst[0, len) = src[0, len); with non-temporal stores when `stream` (then copies_done() follows).
template <class W>
KOKKOS_FORCEINLINE_FUNCTION void copy_words(W* KOKKOS_RESTRICT dst, W const* KOKKOS_RESTRICT src, std::int64_t len,
                                            bool stream) {
  if (stream) {
    detail::stream_copy(dst, src, len);
    return;
  }
  for (std::int64_t e = 0; e < len; ++e) dst[e] = src[e];
}

// Four runs copied together, in interleaved 256-byte blocks (fixed-size copies the compiler
// inlines as vector moves), so that the four streams are in flight at once; a plain loop would be
// turned into four library calls, one run after the other.
template <class W>
KOKKOS_FORCEINLINE_FUNCTION void copy_words_4(W* const* dst, W const* const* src, std::int64_t len, bool stream) {
  constexpr std::int64_t block = 256 / sizeof(W);
  std::int64_t e = 0;
  for (; e + block <= len; e += block)
    for (int i = 0; i < 4; ++i) {
      if (stream) detail::stream_copy(dst[i] + e, src[i] + e, block);
      else std::memcpy(dst[i] + e, src[i] + e, block * sizeof(W));
    }
  for (int i = 0; i < 4; ++i) copy_words(dst[i] + e, src[i] + e, len - e, stream);
}

// After a work item's last streamed store: those stores are weakly ordered.
KOKKOS_FORCEINLINE_FUNCTION void copies_done(bool stream) {
  if (stream) detail::stream_fence();
}

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
