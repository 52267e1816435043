#pragma once
// Times an operation against Kokkos::deep_copy of the same number of bytes, interleaved in the
// same run. Counters: fraction_of_copy = copy time / operation time (1.0 = as fast as deep_copy),
// GB_per_s and copy_GB_per_s (bytes moved once per call).
#include <cstddef>

#include "interleaved.hpp"
#include "tessel/tessel.hpp"

namespace tessel::bench {

template <class Op>
void time_against_copy(benchmark::State& state, std::size_t bytes, Op&& op) {
  Kokkos::View<float*, MemSpace> src(Kokkos::view_alloc(Kokkos::WithoutInitializing, "src"), bytes / sizeof(float));
  Kokkos::View<float*, MemSpace> dst(Kokkos::view_alloc(Kokkos::WithoutInitializing, "dst"), bytes / sizeof(float));
  Kokkos::deep_copy(src, 1.0f);
  Kokkos::deep_copy(dst, 0.0f);
  auto copy = [&] { Kokkos::deep_copy(dst, src); };
  auto [op_s, copy_s] = time_interleaved(state, op, copy);
  state.counters["fraction_of_copy"] = copy_s / op_s;
  state.counters["GB_per_s"] = static_cast<double>(bytes) / op_s / 1e9;
  state.counters["copy_GB_per_s"] = static_cast<double>(bytes) / copy_s / 1e9;
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
}

}  // namespace tessel::bench
