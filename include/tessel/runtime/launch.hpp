#pragma once
// Launching a kernel over [0, n). Tiny kernels on host backends run inline on the calling thread:
// waking a thread pool costs more than the work (a jitted step over 8 elements on 8 devices would
// otherwise pay 8 pool wake-ups), and the lambda is the same code either way.
#include <cstdint>

#include <Kokkos_Core.hpp>

namespace tessel::detail {

// Below this many elements of work, a host kernel runs inline.
inline constexpr std::int64_t inline_kernel_work = 1 << 14;

template <class Exec, class F>
void for_each_index(Exec const& exec, char const* label, std::int64_t n, std::int64_t work, F const& f) {
  if constexpr (Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible) {
    if (work < inline_kernel_work) {
      for (std::int64_t i = 0; i < n; ++i) f(i);
      return;
    }
  }
  Kokkos::parallel_for(label, Kokkos::RangePolicy<Exec>(exec, 0, n), f);
}

}  // namespace tessel::detail
