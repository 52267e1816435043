#pragma once
// How a GPU copies: a work item is one element, so that neighbouring threads touch neighbouring
// memory; no memory hints. Chosen for kernels that run on a device execution space, and for every
// space of a CPU build of the device shapes (backend/copy_shape.hpp).
#include <cstddef>
#include <cstdint>

#include <Kokkos_Core.hpp>

namespace tessel::backend {

struct DeviceCopies {
  static constexpr std::int64_t chunk = 1;

  static constexpr bool streams(std::size_t) { return false; }

  template <class W>
  KOKKOS_FORCEINLINE_FUNCTION static void words(W* KOKKOS_RESTRICT dst, W const* KOKKOS_RESTRICT src, std::int64_t len,
                                                bool) {
    for (std::int64_t e = 0; e < len; ++e) dst[e] = src[e];
  }

  template <class W>
  KOKKOS_FORCEINLINE_FUNCTION static void words_4(W* const* dst, W const* const* src, std::int64_t len, bool stream) {
    for (int i = 0; i < 4; ++i) words(dst[i], src[i], len, stream);
  }

  KOKKOS_FORCEINLINE_FUNCTION static void done(bool) {}
};

}  // namespace tessel::backend
