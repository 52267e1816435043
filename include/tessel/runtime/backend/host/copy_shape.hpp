#pragma once
// How a host thread copies: a work item is a chunk of contiguous elements (or several short runs)
// that one core's vector units go through, and outputs larger than the caches are written around
// them (non-temporal stores). Chosen for kernels that run on a host execution space
// (backend/copy_shape.hpp), in every build: a GPU build's host copies take it too.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <Kokkos_Core.hpp>

#include "tessel/core/compile_pass.hpp"
#include "tessel/runtime/backend/host/stream_copy.hpp"
#include "tessel/runtime/run_plan.hpp"

namespace tessel::backend {

struct HostCopies {
  // Elements a copy's work item moves (read once from cache for every destination).
  static constexpr std::int64_t chunk = detail::run_chunk;

  // Whether copies with this many output bytes (all destinations together) write around the caches.
  static constexpr bool streams(std::size_t output_bytes) { return output_bytes >= detail::stream_output_bytes; }

  // dst[0, len) = src[0, len); with non-temporal stores when `stream` (then done() follows). (A GPU
  // build's device pass sees these too, never running them: the stores are host instructions.)
  template <class W>
  KOKKOS_FORCEINLINE_FUNCTION static void words(W* KOKKOS_RESTRICT dst, W const* KOKKOS_RESTRICT src, std::int64_t len,
                                                bool stream) {
#if !TESSEL_DEVICE_PASS
    if (stream) {
      detail::stream_copy(dst, src, len);
      return;
    }
#endif
    for (std::int64_t e = 0; e < len; ++e) dst[e] = src[e];
  }

  // Four runs copied together, in interleaved 256-byte blocks (fixed-size copies the compiler
  // inlines as vector moves), so that the four streams are in flight at once; a plain loop would be
  // turned into four library calls, one run after the other.
  template <class W>
  KOKKOS_FORCEINLINE_FUNCTION static void words_4(W* const* dst, W const* const* src, std::int64_t len, bool stream) {
    constexpr std::int64_t block = 256 / sizeof(W);
    std::int64_t e = 0;
#if !TESSEL_DEVICE_PASS
    for (; e + block <= len; e += block)
      for (int i = 0; i < 4; ++i) {
        if (stream) detail::stream_copy(dst[i] + e, src[i] + e, block);
        else std::memcpy(dst[i] + e, src[i] + e, block * sizeof(W));
      }
#endif
    for (int i = 0; i < 4; ++i) words(dst[i] + e, src[i] + e, len - e, stream);
  }

  // After a work item's last streamed store: those stores are weakly ordered.
  KOKKOS_FORCEINLINE_FUNCTION static void done([[maybe_unused]] bool stream) {
#if !TESSEL_DEVICE_PASS
    if (stream) detail::stream_fence();
#endif
  }
};

}  // namespace tessel::backend
