#pragma once
// Times several functions interleaved in one loop (one call of each per iteration), so that the
// noise of a shared machine hits all of them alike and their ratios are meaningful. The first
// function is the one the benchmark reports as its (manual) time.
#include <benchmark/benchmark.h>

#include <array>
#include <chrono>
#include <utility>
#include <vector>

#include <Kokkos_Core.hpp>

namespace tessel::bench {

// Every iteration's times, one array per iteration. `before` runs, untimed, before every timed
// call (a barrier between processes, say).
template <class Before, class... Fs>
std::vector<std::array<double, sizeof...(Fs)>> time_interleaved_samples(benchmark::State& state, Before&& before,
                                                                        Fs&&... fns) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::array<double, sizeof...(Fs)>> samples;
  for (auto _ : state) {
    auto& times = samples.emplace_back();
    std::size_t k = 0;
    auto run = [&](auto& f) {
      before();
      auto t0 = Clock::now();
      f();
      Kokkos::fence();
      times[k++] = std::chrono::duration<double>(Clock::now() - t0).count();
    };
    (run(fns), ...);
    state.SetIterationTime(times[0]);
  }
  return samples;
}

// Mean seconds per call of each function.
template <class Before, class... Fs>
std::array<double, sizeof...(Fs)> time_interleaved_after(benchmark::State& state, Before&& before, Fs&&... fns) {
  std::array<double, sizeof...(Fs)> total{};
  auto samples = time_interleaved_samples(state, std::forward<Before>(before), std::forward<Fs>(fns)...);
  for (auto const& times : samples)
    for (std::size_t k = 0; k < total.size(); ++k) total[k] += times[k];
  for (auto& t : total) t /= static_cast<double>(samples.size());
  return total;
}

template <class... Fs>
std::array<double, sizeof...(Fs)> time_interleaved(benchmark::State& state, Fs&&... fns) {
  return time_interleaved_after(state, [] {}, std::forward<Fs>(fns)...);
}

}  // namespace tessel::bench
