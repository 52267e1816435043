// The Megatron MLP block relu(x @ W1) @ W2 (batch 4096, model 1024, hidden 4096, float32; x on
// P('dp', None), W1 on P(None, 'mp'), W2 on P('mp', None) over a (4, 2) dp x mp mesh) as
// 2 processes x 4 devices against 1 process x 8 devices, in one job and interleaved in one loop.
//
//   ./tessel run mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,sm -np 2 \
//     -x TESSEL_NUM_DEVICES=8 -x OMP_NUM_THREADS=2 -x OMP_WAIT_POLICY=passive -x OMP_PROC_BIND=false \
//     build/mpi/bench/bench_mpi_megatron
//
// Each of the 2 processes holds 8 logical devices (16 in all), so both layouts live in one job:
//  - one process: the mesh over process 0's devices 0..7; process 1 waits, asleep (it holds none);
//  - two processes: the mesh over devices 0..3 of process 0 and 8..11 of process 1.
// Both use the machine alike: with one process its OpenMP threads (OMP_NUM_THREADS, all cores)
// run the 8 devices' GEMMs; with two, each process runs its 4 devices' GEMMs one after the other
// on one BLAS thread (omp_set_num_threads(1), GemmSchedule::one_at_a_time), one core each.
// Two device orders of the two-process mesh:
//  - dp_across_processes (devices in order): the mp pairs are on one process, so the block's
//    all-reduce over mp stays inside each process;
//  - mp_across_processes (devices 0 8 1 9 2 10 3 11): every mp pair spans both processes, so the
//    all-reduce (4 MB per device) crosses processes.
// Counters (process 0's times): fraction_of_one_process = one-process time / two-process time,
// the median over iterations of each iteration's ratio (1 is as fast; _means: the ratio of the
// mean times); collective_ms_* = the time of the call's collectives, from tessel::profile of one
// more call; bitwise_equal = 1 when the two layouts' results have the same bits.
#include <benchmark/benchmark.h>
#include <mpi.h>
// The host's OpenMP threads run the GEMMs on the OpenMP backend; GPU backends' builds (hipcc, nvcc)
// have no OpenMP, and their GEMMs run on the GPUs whatever the host's threads.
#if defined(_OPENMP)
#include <omp.h>
#endif

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>
#include <vector>

#include <Kokkos_Core.hpp>

#include "mpi_bench.hpp"
#include "tessel/runtime/local_dot.hpp"
#include "tessel/tessel.hpp"
#include "tessel/tools/profile.hpp"

namespace {

using namespace tessel;
using detail::GemmSchedule;
constexpr int batch = 4096, model = 1024, hidden = 4096;

// A barrier that sleeps while it waits: the process that holds no device of the one-process mesh
// must leave the cores to the one that computes (MPI's own barrier spins).
void sleepy_barrier() {
  MPI_Request r;
  MPI_Ibarrier(MPI_COMM_WORLD, &r);
  for (int done = 0; !done;) {
    MPI_Test(&r, &done, MPI_STATUS_IGNORE);
    if (!done) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
}

// The block's inputs on `mesh` and its jitted function.
struct Block {
  Tensor<float> x, w1, w2;
  explicit Block(Mesh const& mesh)
      : x(random::normal(PRNGKey(0), {batch, model}, NamedSharding(mesh, P("dp", None)))),
        w1(random::normal(PRNGKey(1), {model, hidden}, NamedSharding(mesh, P(None, "mp")))),
        w2(random::normal(PRNGKey(2), {hidden, model}, NamedSharding(mesh, P("mp", None)))) {}
};

double collective_us(Profile const& p) {
  double us = 0;
  for (auto const& row : p.rows)
    if (row.kind != "gemm" && row.kind != "fused" && row.kind != "reduce" && row.kind != "kernel") us += row.measured_us;
  return us;
}

// How this process's threads run the block: all of them (one process), or one (two processes).
void use_threads(bool all, int threads) {
#if defined(_OPENMP)
  omp_set_num_threads(all ? threads : 1);
#else
  (void)threads;
#endif
  detail::set_gemm_schedule(all ? GemmSchedule::automatic : GemmSchedule::one_at_a_time);
}

int host_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void BM_megatron(benchmark::State& state, bool mp_across) {
  int const me = distributed::process_index();
  int const threads = host_threads();
  std::vector<int> one_ids{0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<int> two_ids = mp_across ? std::vector<int>{0, 8, 1, 9, 2, 10, 3, 11}
                                       : std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11};
  auto one_mesh = make_mesh({4, 2}, {"dp", "mp"}, one_ids);
  auto two_mesh = make_mesh({4, 2}, {"dp", "mp"}, two_ids);
  auto mlp = jit([](auto const& x, auto const& w1, auto const& w2) { return matmul(relu(x.matmul(w1)), w2); });
  Block two(two_mesh);
  std::optional<Block> one;
  if (me == 0) one.emplace(one_mesh);

  using Clock = std::chrono::steady_clock;
  auto run_one = [&] {  // process 0 alone; the other sleeps
    sleepy_barrier();
    double s = 0;
    if (me == 0) {
      use_threads(true, threads);
      auto t0 = Clock::now();
      benchmark::DoNotOptimize(mlp(one->x, one->w1, one->w2));
      Kokkos::fence();
      s = std::chrono::duration<double>(Clock::now() - t0).count();
    }
    sleepy_barrier();
    return s;
  };
  auto run_two = [&] {
    use_threads(false, threads);
    sleepy_barrier();
    auto t0 = Clock::now();
    benchmark::DoNotOptimize(mlp(two.x, two.w1, two.w2));
    Kokkos::fence();
    double s = std::chrono::duration<double>(Clock::now() - t0).count();
    sleepy_barrier();
    return s;
  };
  run_one();  // warm: plans, allocations, the communicators
  run_two();
  double one_s = 0, two_s = 0;
  std::vector<double> ratios;  // per iteration: one process's time over two processes'
  long iteration = 0;
  for (auto _ : state) {
    double o = 0, t = 0;
    if (iteration++ % 2) {  // the two take turns at going first
      t = run_two();
      o = run_one();
    } else {
      o = run_one();
      t = run_two();
    }
    one_s += o;
    two_s += t;
    ratios.push_back(o / t);
    state.SetIterationTime(t);
  }
  auto n = static_cast<double>(state.iterations());
  one_s /= n;
  two_s /= n;
  std::sort(ratios.begin(), ratios.end());
  double const median = ratios.size() % 2 ? ratios[ratios.size() / 2]
                                          : (ratios[ratios.size() / 2 - 1] + ratios[ratios.size() / 2]) / 2;

  // One more call of each, profiled: the time in collectives.
  use_threads(false, threads);
  sleepy_barrier();
  Profile two_profile = profile(mlp, two.x, two.w1, two.w2);
  auto two_result = process_allgather(Tensor<float>(mlp(two.x, two.w1, two.w2)));
  sleepy_barrier();
  double one_collective_us = 0, equal = 0;
  if (me == 0) {
    use_threads(true, threads);
    one_collective_us = collective_us(profile(mlp, one->x, one->w1, one->w2));
    auto one_result = Tensor<float>(mlp(one->x, one->w1, one->w2)).to_host();
    equal = one_result.size() == two_result.size() &&
            std::memcmp(one_result.data(), two_result.data(), one_result.size() * sizeof(float)) == 0;
  }
  sleepy_barrier();
  use_threads(true, threads);
  double const flops = 2.0 * 2.0 * batch * static_cast<double>(model) * hidden;
  state.counters["one_process_ms"] = one_s * 1e3;
  state.counters["two_processes_ms"] = two_s * 1e3;
  state.counters["fraction_of_one_process"] = median;
  state.counters["fraction_of_one_process_means"] = one_s / two_s;
  state.counters["two_processes_GFLOP_per_s"] = flops / two_s / 1e9;
  state.counters["collective_ms_two_processes"] = collective_us(two_profile) / 1e3;
  state.counters["collective_ms_one_process"] = one_collective_us / 1e3;
  state.counters["bitwise_equal"] = equal;
  state.counters["threads"] = threads;
}

constexpr int iterations = 7;
BENCHMARK_CAPTURE(BM_megatron, dp_across_processes, false)
    ->Iterations(iterations)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_megatron, mp_across_processes, true)
    ->Iterations(iterations)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  tessel::ScopeGuard guard(argc, argv);
  if (tessel::distributed::process_count() != 2 || tessel::local_device_count() != 8) {
    std::fprintf(stderr, "bench_mpi_megatron: run 2 processes of 8 devices each (mpirun -np 2, TESSEL_NUM_DEVICES=8)\n");
    return 1;
  }
  return tessel::bench::run_reporting_on_rank_zero(argc, argv);
}
