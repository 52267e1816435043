#include "instruction_times.hpp"

#include "statistics.hpp"

namespace tessel::study {

std::vector<InstructionTime> median_instructions(std::vector<std::vector<InstructionTime>> const& profiles) {
  if (profiles.empty()) return {};
  std::vector<InstructionTime> out = profiles[0];
  for (std::size_t k = 0; k < out.size(); ++k) {
    std::vector<double> us;
    for (auto const& p : profiles)
      if (p.size() == out.size()) us.push_back(p[k].measured_us);
    out[k].measured_us = median(us);
  }
  return out;
}

}  // namespace tessel::study
