#pragma once
// One (problem, platform, application) result of a study: a row of its CSV in the P3 Analysis
// Library's layout (results_csv.hpp) and of its JSON (results_json.hpp).
#include <string>
#include <vector>

#include "instruction_times.hpp"

namespace tessel::study {

struct Row {
  std::string problem, platform, application;
  double fom = 0;          // median over the repetitions
  std::string unit;        // GB/s or GFLOP/s
  double fom_min = 0, fom_max = 0, fom_stddev = 0;
  double median_s = 0;     // seconds per call (median)
  int repetitions = 0;
  std::string limit_name;  // stream_triad, blas_sgemm or copy
  double limit = 0;        // the platform's measured limit, in `unit`
  double arch_eff = 0, app_eff = 0;
  double flops = 0, bytes = 0;  // per call; intensity = flops / bytes
  double peak_GBps = 0, peak_GFLOPps = 0;  // the platform's triad and GEMM peak (for rooflines)
  double peak_fma_GFLOPps = 0;  // every thread's vector FMAs (measure/fma_peak.hpp): above the GEMM's
  std::string workload, size;
  int devices = 0, threads = 0;
  std::string mesh;
  std::vector<InstructionTime> instructions;  // in the JSON only; empty where no plan runs
};

}  // namespace tessel::study
