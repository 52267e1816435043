#pragma once
// Times several functions interleaved in one loop (one call of each per iteration), so that the
// noise of a shared machine hits all of them alike and their ratios are meaningful. The first
// function is the one the benchmark reports as its (manual) time.
#include <benchmark/benchmark.h>

#include <array>
#include <chrono>
#include <utility>

#include <Kokkos_Core.hpp>

namespace tessel::bench {

// `before` runs, untimed, before every timed call (a barrier between processes, say).
template <class Before, class... Fs>
std::array<double, sizeof...(Fs)> time_interleaved_after(benchmark::State& state, Before&& before, Fs&&... fns) {
  using Clock = std::chrono::steady_clock;
  std::array<double, sizeof...(Fs)> total{};
  for (auto _ : state) {
    double first = -1;
    std::size_t k = 0;
    auto run = [&](auto& f) {
      before();
      auto t0 = Clock::now();
      f();
      Kokkos::fence();
      double s = std::chrono::duration<double>(Clock::now() - t0).count();
      total[k++] += s;
      if (first < 0) first = s;
    };
    (run(fns), ...);
    state.SetIterationTime(first);
  }
  for (auto& t : total) t /= static_cast<double>(state.iterations());
  return total;  // mean seconds per call
}

template <class... Fs>
std::array<double, sizeof...(Fs)> time_interleaved(benchmark::State& state, Fs&&... fns) {
  return time_interleaved_after(state, [] {}, std::forward<Fs>(fns)...);
}

}  // namespace tessel::bench
