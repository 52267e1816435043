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

// Every iteration's times, one array per iteration, the first function's per call of `repeats`
// calls made back to back (as a program repeats a step, its data as warm as the step leaves it).
// `before` runs, untimed, before every timed call (a barrier between processes, say).
template <class Before, class... Fs>
std::vector<std::array<double, sizeof...(Fs)>> time_interleaved_repeated_samples(benchmark::State& state, int repeats,
                                                                                 Before&& before, Fs&&... fns) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::array<double, sizeof...(Fs)>> samples;
  for (auto _ : state) {
    auto& times = samples.emplace_back();
    std::size_t k = 0;
    auto run = [&](auto& f) {
      int const calls = k == 0 ? repeats : 1;
      before();
      auto t0 = Clock::now();
      for (int c = 0; c < calls; ++c) f();
      Kokkos::fence();
      times[k++] = std::chrono::duration<double>(Clock::now() - t0).count() / calls;
    };
    (run(fns), ...);
    state.SetIterationTime(times[0]);
  }
  return samples;
}

// Every iteration's times, one array per iteration. `before` runs, untimed, before every timed
// call (a barrier between processes, say).
template <class Before, class... Fs>
std::vector<std::array<double, sizeof...(Fs)>> time_interleaved_samples(benchmark::State& state, Before&& before,
                                                                        Fs&&... fns) {
  return time_interleaved_repeated_samples(state, 1, std::forward<Before>(before), std::forward<Fs>(fns)...);
}

// Mean seconds per call of each function, over the samples.
template <std::size_t N>
std::array<double, N> mean_times(std::vector<std::array<double, N>> const& samples) {
  std::array<double, N> total{};
  for (auto const& times : samples)
    for (std::size_t k = 0; k < N; ++k) total[k] += times[k];
  for (auto& t : total) t /= static_cast<double>(samples.size());
  return total;
}

// Mean seconds per call of each function.
template <class Before, class... Fs>
std::array<double, sizeof...(Fs)> time_interleaved_after(benchmark::State& state, Before&& before, Fs&&... fns) {
  return mean_times(time_interleaved_samples(state, std::forward<Before>(before), std::forward<Fs>(fns)...));
}

// Mean seconds per call of each function, the first run `repeats` times back to back each iteration.
template <class... Fs>
std::array<double, sizeof...(Fs)> time_interleaved_repeated(benchmark::State& state, int repeats, Fs&&... fns) {
  return mean_times(time_interleaved_repeated_samples(state, repeats, [] {}, std::forward<Fs>(fns)...));
}

template <class... Fs>
std::array<double, sizeof...(Fs)> time_interleaved(benchmark::State& state, Fs&&... fns) {
  return time_interleaved_after(state, [] {}, std::forward<Fs>(fns)...);
}

}  // namespace tessel::bench
