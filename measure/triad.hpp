#pragma once
// STREAM triad a = b + s * c through Kokkos on three arrays of n floats: the machine's memory
// bandwidth limit for benchmarks that report fraction_of_triad and for the study's memory-bound
// workloads (timed interleaved in the same run).
#include <cstdint>

#include "tessel/tessel.hpp"

namespace tessel::measure {

struct Triad {
  Kokkos::View<float*, MemSpace> a, b, c;
  explicit Triad(std::int64_t n)
      : a(Kokkos::view_alloc(Kokkos::WithoutInitializing, "a"), n),
        b(Kokkos::view_alloc(Kokkos::WithoutInitializing, "b"), n),
        c(Kokkos::view_alloc(Kokkos::WithoutInitializing, "c"), n) {
    Kokkos::deep_copy(a, 0.0f);
    Kokkos::deep_copy(b, 1.0f);
    Kokkos::deep_copy(c, 2.0f);
  }
  void operator()() const {
    auto a_ = a, b_ = b, c_ = c;
    Kokkos::parallel_for("triad", Kokkos::RangePolicy<ExecSpace>(0, a.extent(0)),
                         KOKKOS_LAMBDA(std::int64_t i) { a_(i) = b_(i) + 3.0f * c_(i); });
  }
  // Bytes a triad moves: two reads and one write (no write-allocate counted, as STREAM).
  [[nodiscard]] double bytes() const { return 3.0 * static_cast<double>(a.extent(0)) * sizeof(float); }
};

}  // namespace tessel::measure
