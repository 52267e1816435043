// One main for every benchmark binary: Kokkos and 8 logical devices for the whole run. The run's
// context (printed above the table and in --benchmark_format=json) names the BLAS, its core type and
// threads, and the environment variables that choose them.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <string>

#include "tessel/runtime/local_dot.hpp"
#include "tessel/tessel.hpp"

int main(int argc, char** argv) {
  tessel::ScopeGuard guard(argc, argv);
  tessel::set_device_count(8);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  auto blas = tessel::detail::blas_info();
  benchmark::AddCustomContext("blas", blas.config);
  benchmark::AddCustomContext("blas_core", blas.core);
  benchmark::AddCustomContext("blas_threading", blas.threading);
  benchmark::AddCustomContext("blas_threads", std::to_string(blas.threads));
  benchmark::AddCustomContext("half_gemms", blas.half_gemms);
  benchmark::AddCustomContext("f32_gemms", blas.f32_gemms);
  benchmark::AddCustomContext("host_threads", std::to_string(Kokkos::DefaultHostExecutionSpace().concurrency()));
  for (char const* var : {"OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                          "OMP_PROC_BIND", "OMP_PLACES", "OMP_WAIT_POLICY", "TESSEL_F32_GEMM"}) {
    char const* value = std::getenv(var);
    benchmark::AddCustomContext(var, value ? value : "(unset)");
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
