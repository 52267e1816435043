#pragma once
// Where a workload call's time goes: one entry per instruction of its plans (tessel::profile,
// tools/profile.hpp), beside the cost model's estimate.
#include <cstddef>
#include <string>
#include <vector>

namespace tessel::study {

// One instruction of a profiled workload call. `call` numbers the jitted functions one workload
// call runs (the transformer layer runs two halves), `step` is the instruction's index in that
// function's plan.
struct InstructionTime {
  int call = 0;
  std::size_t step = 0;
  std::string label, kind;
  double measured_us = 0;  // all devices together; in results, the median over the profiled calls
  double estimate_us = 0;  // the cost model's
  double flops = 0, bytes = 0;  // per device (bytes read and written)
};

// Per instruction, the median of measured_us over several profiles of the same call (which run
// the same plans, so the lists match); the first list's other fields.
std::vector<InstructionTime> median_instructions(std::vector<std::vector<InstructionTime>> const& profiles);

}  // namespace tessel::study
