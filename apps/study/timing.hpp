#pragma once
// Wall-clock timing of a study's calls, fenced so that each time covers the work it started.
#include <Kokkos_Core.hpp>

#include "tessel/runtime/device.hpp"
#include <algorithm>
#include <chrono>
#include <cmath>

namespace tessel::study {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Times `calls` calls of f (fenced), in seconds per call.
template <class F>
double time_calls(F const& f, int calls) {
  auto t0 = Clock::now();
  for (int i = 0; i < calls; ++i) f();
  tessel::fence_all_devices();  // (the calls' work on every device)
  return seconds_since(t0) / calls;
}

// How many calls of f take about `seconds` (at least 1), from one call after a warm-up call.
template <class F>
int calls_for(F const& f, double seconds) {
  time_calls(f, 1);
  double t = time_calls(f, 1);
  return static_cast<int>(std::clamp(std::ceil(seconds / std::max(t, 1e-7)), 1.0, 1e6));
}

}  // namespace tessel::study
