// GEMMs on host backends, by OpenBLAS (float32 ones by oneDNN where it is faster: gemm_f32.cpp).
//
// Every logical device shares the host's cores and Kokkos's OpenMP threads, and the BLAS is
// OpenBLAS's OpenMP build where there is one (CMakeLists.txt), so the BLAS runs on those same
// threads: a GEMM called from the main thread uses all of them, one called inside a parallel region
// runs on its caller alone. The devices' GEMMs then either run side by side, one single-threaded
// GEMM per thread (devices_in_parallel: no fork/join or partitioning inside the BLAS, each thread
// keeps its own blocks in cache), or one after the other, each over all threads (one_at_a_time: for
// fewer GEMMs than threads, or uneven counts).
#include "tessel/runtime/backend/gemm_batch.hpp"

#include <cblas.h>

#include <type_traits>

#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_OPENMP)
#include <omp.h>
#endif

#include "tessel/runtime/device.hpp"
#include "tessel/runtime/launch.hpp"
#include "tessel/runtime/local_dot.hpp"
#include "tessel/runtime/stream.hpp"
#include "enqueue_gemms.hpp"
#include "gemm_f32.hpp"

namespace tessel::detail {
namespace {

static_assert(Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible,
              "backend/host runs GEMMs on host memory: a device backend has its own folder");

template <class T>
void gemm(GemmCall<T> const& e) {
  auto const ta = e.la.transposed ? CblasTrans : CblasNoTrans, tb = e.lb.transposed ? CblasTrans : CblasNoTrans;
  auto const m = static_cast<int>(e.m), n = static_cast<int>(e.n), k = static_cast<int>(e.k);
  if constexpr (std::is_same_v<T, float>) {
    if (f32_gemm_by_onednn() && onednn_sgemm(e)) return;
    cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, 1.0f, e.a, static_cast<int>(e.la.ld), e.b, static_cast<int>(e.lb.ld),
                0.0f, e.c, n);
  } else {
    cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, 1.0, e.a, static_cast<int>(e.la.ld), e.b, static_cast<int>(e.lb.ld),
                0.0, e.c, n);
  }
}

// Whether `count` GEMMs of m * n * k each run side by side, one per host thread, rather than one
// after another over all threads.
bool in_parallel(std::int64_t count, std::int64_t mnk) {
  GemmSchedule s = gemm_schedule();
  if (s == GemmSchedule::one_at_a_time || count < 2) return false;
  if (s == GemmSchedule::devices_in_parallel) return true;
  // Tiny GEMMs run single-threaded inside the BLAS anyway; waking the pool costs more.
  if (mnk < (1 << 18)) return false;
  static bool const blas_ok = blas_info().single_threaded_in_parallel;
  std::int64_t const threads = HostExecSpace().concurrency();
  // Every thread busy to the end: as many GEMMs as threads or a multiple of it, or enough that
  // the last, partial round is a small part of the whole.
  return blas_ok && threads > 1 && count >= threads && (count % threads == 0 || count >= 4 * threads);
}

template <class T>
void run(std::span<GemmCall<T> const> calls, std::int64_t largest) {
  auto const count = static_cast<std::int64_t>(calls.size());
  if (in_parallel(count, largest)) {
    using Policy = Kokkos::RangePolicy<HostExecSpace, Kokkos::Schedule<Kokkos::Dynamic>>;
    Kokkos::parallel_for(kernel_label("tessel::gemm"), Policy(0, count).set_chunk_size(1),
                         [&](std::int64_t g) { gemm(calls[static_cast<std::size_t>(g)]); });
    HostExecSpace().fence();
  } else {
    for (auto const& call : calls) gemm(call);
  }
}

}  // namespace

void run_gemms(std::span<GemmCall<float> const> calls, std::int64_t largest) {
  enqueue_gemms(calls, [largest](std::span<GemmCall<float> const> c) { run(c, largest); });
}
void run_gemms(std::span<GemmCall<double> const> calls, std::int64_t largest) {
  enqueue_gemms(calls, [largest](std::span<GemmCall<double> const> c) { run(c, largest); });
}

BlasInfo blas_info() {
  BlasInfo info;
  info.config = openblas_get_config();
  info.core = openblas_get_corename();
  switch (openblas_get_parallel()) {
    case 0:
      info.threading = "sequential";
      info.single_threaded_in_parallel = true;
      break;
    case 2:
      info.threading = "OpenMP";
      // OpenBLAS's OpenMP build sizes each call by omp_get_max_threads(), and runs one called
      // inside a parallel region on its caller (the region must be OpenMP's: Kokkos::OpenMP).
#if defined(KOKKOS_ENABLE_OPENMP)
      info.threads = omp_get_max_threads();
      info.single_threaded_in_parallel = std::is_same_v<HostExecSpace, Kokkos::OpenMP>;
#else
      info.threads = openblas_get_num_threads();
#endif
      break;
    default:
      // The pthreads build: its own threads, as many as it counted CPUs at load time (one if the
      // process was already pinned to one). Side by side GEMMs would share its one thread pool.
      info.threading = "pthreads";
      info.threads = openblas_get_num_threads();
      info.single_threaded_in_parallel = info.threads == 1;
      break;
  }
  if (info.threading == "sequential") info.threads = 1;
  info.half_gemms = half_gemm_info();
  info.f32_gemms = f32_gemm_info();
  info.f32_vector_bits = f32_gemm_vector_bits();
  return info;
}

}  // namespace tessel::detail
