// One main for every benchmark binary: Kokkos and 8 logical devices for the whole run.
#include <benchmark/benchmark.h>

#include "tessel/tessel.hpp"

int main(int argc, char** argv) {
  tessel::ScopeGuard guard(argc, argv);
  tessel::set_device_count(8);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
