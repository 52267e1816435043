#pragma once
// What the MPI benchmarks (bench_mpi_*.cpp, each its own main under mpirun) share: every rank runs
// the same benchmarks with fixed iteration counts (an adaptive count could differ between ranks
// and leave one waiting in a collective), and rank 0 alone reports.
#include <benchmark/benchmark.h>

#include <vector>

#include "tessel/runtime/distributed.hpp"

namespace tessel::bench {

// Runs the registered benchmarks on every rank; what ranks other than 0 report goes nowhere.
inline int run_reporting_on_rank_zero(int argc, char** argv) {
  class Quiet final : public benchmark::BenchmarkReporter {
   public:
    bool ReportContext(Context const&) override { return true; }
    void ReportRuns(std::vector<Run> const&) override {}
  };
  benchmark::Initialize(&argc, argv);
  if (distributed::process_index() != 0) {
    Quiet quiet;
    benchmark::RunSpecifiedBenchmarks(&quiet);
  } else {
    benchmark::RunSpecifiedBenchmarks();
  }
  benchmark::Shutdown();
  return 0;
}

}  // namespace tessel::bench
