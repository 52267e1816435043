#pragma once
// Times an operation against Kokkos::deep_copy of the same number of bytes, interleaved in the
// same run (one copy, then one operation, per iteration), so machine noise hits both alike.
// Counters: fraction_of_copy = copy time / operation time (1.0 = as fast as deep_copy),
// GB_per_s and copy_GB_per_s (bytes moved once per iteration).
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstddef>

#include "tessel/tessel.hpp"

namespace tessel::bench {

template <class Op>
void time_against_copy(benchmark::State& state, std::size_t bytes, Op&& op) {
  using Clock = std::chrono::steady_clock;
  Kokkos::View<float*, MemSpace> src(Kokkos::view_alloc(Kokkos::WithoutInitializing, "src"), bytes / sizeof(float));
  Kokkos::View<float*, MemSpace> dst(Kokkos::view_alloc(Kokkos::WithoutInitializing, "dst"), bytes / sizeof(float));
  Kokkos::deep_copy(src, 1.0f);
  Kokkos::deep_copy(dst, 0.0f);
  double copy_s = 0, op_s = 0;
  for (auto _ : state) {
    auto t0 = Clock::now();
    Kokkos::deep_copy(dst, src);
    Kokkos::fence();
    auto t1 = Clock::now();
    op();
    Kokkos::fence();
    auto t2 = Clock::now();
    double this_op = std::chrono::duration<double>(t2 - t1).count();
    copy_s += std::chrono::duration<double>(t1 - t0).count();
    op_s += this_op;
    state.SetIterationTime(this_op);
  }
  auto n = static_cast<double>(state.iterations());
  state.counters["fraction_of_copy"] = copy_s / op_s;
  state.counters["GB_per_s"] = static_cast<double>(bytes) * n / op_s / 1e9;
  state.counters["copy_GB_per_s"] = static_cast<double>(bytes) * n / copy_s / 1e9;
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
}

}  // namespace tessel::bench
