#pragma once
// The machine a study runs on: its name as a platform, and its limits, each a kernel that is timed
// interleaved with the workloads so that a busy machine slows both alike.
#include <cstdint>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"
#include "triad.hpp"
#include "workloads.hpp"

namespace tessel::study {

// "<CPU model> / OpenMP": this machine and backend.
std::string platform_label();

// The limit of each Bound: STREAM triad through Kokkos (memory), the BLAS's SGEMM (compute),
// Kokkos::deep_copy (collective).
class MachineLimits {
 public:
  MachineLimits();
  void run(Bound bound);                    // one call of the limit's kernel
  [[nodiscard]] double work(Bound bound) const;  // what one call does: GB, or GFLOP for compute

 private:
  static constexpr int gemm_n = 1024;
  measure::Triad triad_{std::int64_t{1} << 24};  // 3 x 64 MiB: past any last-level cache
  Kokkos::View<float*, MemSpace> copy_src_, copy_dst_;
  std::vector<float> a_, b_, c_;  // the GEMM's operands
};

}  // namespace tessel::study
