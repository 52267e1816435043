#pragma once
// The memory analysis (plan/memory_analysis.hpp) held against what the runtime measures
// (runtime/memory_stats.hpp): each device's peak of live bytes above what it held before a call,
// against the analysis's peak above the call's arguments, within 5%.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tessel/tessel.hpp"

namespace tessel::test {

// Runs `call` (which returns what it makes, kept until measured) and checks every device of `m`.
template <class Call>
void check_memory_against_measured(plan::MemoryAnalysis const& m, Call const& call) {
  REQUIRE(m.device >= 0);
  std::vector<std::int64_t> before;
  for (auto const& d : m.devices) before.push_back(is_local_device(d.device) ? memory_stats(d.device).bytes_in_use : 0);
  reset_peak_memory_stats();
  auto kept = call();
  for (std::size_t k = 0; k < m.devices.size(); ++k) {
    auto const& d = m.devices[k];
    if (!is_local_device(d.device)) continue;  // (another process's: it measures its own)
    std::int64_t const measured = memory_stats(d.device).peak_bytes_in_use - before[k];
    std::int64_t const estimated = d.peak_bytes - d.argument_bytes;
    INFO("device " << d.device << ": measured " << measured << " bytes above the arguments, estimated " << estimated);
    CHECK(std::abs(static_cast<double>(measured - estimated)) <= 0.05 * static_cast<double>(std::max(measured, estimated)));
  }
}

}  // namespace tessel::test
