#pragma once
// Times a row-wise kernel (a normalization, softmax) against both of the machine's limits, all
// interleaved in one loop:
//  - from memory: rows x cols float32, rows sharded over 8 devices, against a STREAM triad of the
//    same element count (fraction_of_triad; bytes: one read and one write of the tensor);
//  - from cache: the same kernel on as many rows as keep input and output (8 MB) in the last-level
//    cache, run 8 times in a row per timed call (the other calls of the loop evict it, so the first
//    of the 8 reads memory; in_cache_GB_per_s). fraction_of_in_cache = from-memory rate / in-cache
//    rate: near 1 the kernel runs as fast from memory as from cache, so its arithmetic, not memory,
//    bounds it (on a 2-core machine, JAX-exact tanh and exp cost more per element than memory does);
//  - the vector FMA peak of the same binary (fma_peak_GFLOP_per_s, the widest ISA).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>

#include "fma_peak.hpp"
#include "interleaved.hpp"
#include "tessel/tessel.hpp"
#include "triad.hpp"

namespace tessel::bench {

// make(rows) returns the call that runs the kernel on (rows, cols) float32 (its inputs made once).
template <class Make>
void time_row_kernel(benchmark::State& state, std::int64_t rows, std::int64_t cols, Make&& make) {
  constexpr std::int64_t cache_bytes = std::int64_t{8} << 20;
  constexpr int cached_calls = 8;
  std::int64_t const cached_rows = std::max<std::int64_t>(8, cache_bytes / (2 * cols * 4) / 8 * 8);
  auto from_memory = make(rows);
  auto from_cache = [once = make(cached_rows)] {
    for (int k = 0; k < cached_calls; ++k) once();
  };
  measure::Triad triad(rows * cols);
  measure::FmaKernel peak = measure::widest_fma();
  // Calls of 5 ms, a few times the from-memory call: MinTime counts the kernel's time only, and
  // with the default 50 ms calls the peak took 8 of every 9 seconds of the loop.
  peak.calibrate(0.005);
  auto [memory_s, cache_s, triad_s, peak_s] = time_interleaved(state, from_memory, from_cache, triad, peak);
  auto const bytes = [&](std::int64_t r) { return 2.0 * static_cast<double>(r * cols) * sizeof(float); };
  double const rate = bytes(rows) / memory_s, cached_rate = cached_calls * bytes(cached_rows) / cache_s;
  state.counters["GB_per_s"] = rate / 1e9;
  state.counters["triad_GB_per_s"] = triad.bytes() / triad_s / 1e9;
  state.counters["fraction_of_triad"] = rate / (triad.bytes() / triad_s);
  state.counters["in_cache_GB_per_s"] = cached_rate / 1e9;
  state.counters["fraction_of_in_cache"] = rate / cached_rate;
  state.counters["fma_peak_GFLOP_per_s"] = peak.flops() / peak_s / 1e9;
  state.SetLabel(std::string("peak: ") + peak.isa);
}

}  // namespace tessel::bench
