#pragma once
// The study's built-in workloads: a registry in the way bench/ lists its benchmarks, one entry per
// workload with its size parameters, defaults and the limit its figure of merit is compared with.
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "instruction_times.hpp"
#include "study.hpp"

namespace tessel::study {

// Which machine limit a workload's figure of merit is measured against.
enum class Bound {
  memory,      // GB/s against a STREAM triad through Kokkos
  compute,     // GFLOP/s against the BLAS's SGEMM peak
  collective,  // GB/s against Kokkos::deep_copy of the same bytes
};
char const* fom_unit(Bound bound);    // "GB/s" or "GFLOP/s"
char const* limit_name(Bound bound);  // the limit's name in the results: stream_triad, blas_sgemm or copy

// A workload made for one size and configuration, ready to time.
struct Instance {
  std::function<void()> call;  // one call; the runner fences after it
  double bytes = 0;            // counted per call (the FOM's bytes for memory and collective bounds)
  double flops = 0;            // per call
  // One more call, profiled (tessel::profile of each jitted function it runs, in order): where the
  // time goes per instruction. Empty for the collectives, which run no plan.
  std::function<std::vector<InstructionTime>()> profile;
};

struct Workload {
  std::string_view name, description;
  Bound bound;
  std::vector<std::pair<std::string_view, std::int64_t>> defaults;  // size parameters, in order
  // Why this size cannot run on this configuration (nullopt: it can). Called while the study file
  // is checked, so that a bad combination fails before anything runs.
  std::optional<std::string> (*check)(Size const&, Configuration const&);
  // Allocates the inputs on the configuration's mesh (the process has config.devices devices).
  Instance (*make)(Size const&, Configuration const&);
};

std::span<Workload const> workloads();
Workload const* find_workload(std::string_view name);
std::string workload_names();  // "fused_chain, softmax, ..." for messages

}  // namespace tessel::study
