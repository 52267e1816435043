#pragma once
// The efficiencies of a study's rows and Pennycook's performance-portability metric over them
// (the terms: study.hpp).
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "result_row.hpp"

namespace tessel::study {

// The best machine peaks any row of a platform carries (for rooflines): STREAM triad GB/s, BLAS
// SGEMM GFLOP/s and the vector FMA peak.
struct Peaks {
  double GBps = 0, GFLOPps = 0, fma_GFLOPps = 0;
};
std::map<std::string, Peaks> platform_peaks(std::span<Row const> rows);

// Fills `limit` of rows that lack it from another row of the same workload on the same platform
// and unit, then computes arch eff and app eff for every row.
void compute_efficiencies(std::vector<Row>& rows);

// Pennycook's metric over efficiencies of one application on the platforms H: |H| / sum(1 / e),
// 0 if any platform is unsupported (std::nullopt) or has efficiency 0.
double performance_portability(std::span<std::optional<double> const> efficiencies);

struct Portability {
  std::string problem, application;
  std::vector<std::string> platforms;    // H: every platform with a result for the problem
  std::vector<std::string> unsupported;  // those of H the application has no result on
  double pp_app = 0, pp_arch = 0;
};
// PP for every (problem, application) of the rows (after compute_efficiencies); where one
// (problem, platform, application) has several rows (merged runs), the best counts.
std::vector<Portability> portability(std::span<Row const> rows);

}  // namespace tessel::study
