// Collectives across processes (the `mpi` preset; run under mpirun, one device per process):
// tessel's collectives() against the raw MPI call that moves the same bytes, interleaved in one
// loop so that the machine's noise hits both alike. Each reports `fraction_of_mpi` (the MPI call's
// time over tessel's, the median over iterations: 1 is as fast) and `fraction_of_mpi_means`. Every rank runs the same fixed iteration count (the adaptive
// count could differ between ranks and leave one waiting); rank 0 reports. tessel's collectives run
// over the communicator of the group's processes (here every process), made on the first call.
//   ./tessel run mpirun --allow-run-as-root --oversubscribe --mca btl self,sm -np 2 \
//     -x TESSEL_NUM_DEVICES=1 build/mpi/bench/bench_mpi_collectives
#include <benchmark/benchmark.h>
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <utility>
#include <vector>

#include <Kokkos_Core.hpp>

#include "interleaved.hpp"
#include "mpi_bench.hpp"
#include "tessel/tessel.hpp"
#include "tessel/runtime/collectives.hpp"

namespace {

using namespace tessel;

constexpr std::int64_t bytes = 64 << 20;  // per process
constexpr std::int64_t floats = bytes / 4;

struct Setup {
  int me = distributed::process_index(), n = distributed::process_count();
  std::vector<float> in = std::vector<float>(static_cast<std::size_t>(floats), 1.0f);
  std::vector<float> out = std::vector<float>(static_cast<std::size_t>(floats));
  std::vector<float> mpi_out = std::vector<float>(static_cast<std::size_t>(floats) * static_cast<std::size_t>(n));
  // One member per process (one device each); only this process's buffers are set.
  std::vector<GroupMember> group() {
    std::vector<GroupMember> g;
    for (int p = 0; p < n; ++p)
      g.push_back({p, p == me ? reinterpret_cast<std::byte const*>(in.data()) : nullptr,
                   p == me ? reinterpret_cast<std::byte*>(out.data()) : nullptr});
    return g;
  }
};

// Interleaved as bench::time_interleaved, for many processes: one untimed call of each first
// (communicators and receive buffers are made once, on first use), and every timed call starts
// from a barrier, so that one process's lag in the previous call is not counted in the next.
// Rank 0's times. Reports the mean times and, as fraction_of_mpi, the median over iterations of
// MPI's time over tessel's in that iteration (one descheduling of either, on this shared machine,
// then moves the figure little), besides the ratio of the means.
// The two take turns at going first (odd iterations run MPI's call first), so that whatever
// the first call after a barrier pays falls on both alike.
template <class Tessel, class Mpi>
void time_and_report(benchmark::State& state, Tessel&& tessel, Mpi&& mpi) {
  tessel();
  mpi();
  long iteration = 0;
  auto first = [&] { iteration % 2 ? mpi() : tessel(); };
  auto second = [&] {
    iteration % 2 ? tessel() : mpi();
    ++iteration;
  };
  auto samples = bench::time_interleaved_samples(state, [] { MPI_Barrier(MPI_COMM_WORLD); }, first, second);
  for (std::size_t i = 1; i < samples.size(); i += 2) std::swap(samples[i][0], samples[i][1]);
  double tessel_s = 0, mpi_s = 0;
  std::vector<double> ratios;
  for (auto const& [t, m] : samples) {
    tessel_s += t / static_cast<double>(samples.size());
    mpi_s += m / static_cast<double>(samples.size());
    ratios.push_back(m / t);
  }
  std::sort(ratios.begin(), ratios.end());
  std::size_t const n = ratios.size();
  state.counters["processes"] = distributed::process_count();
  state.counters["MB_per_process"] = static_cast<double>(bytes) / (1 << 20);
  state.counters["tessel_ms"] = tessel_s * 1e3;
  state.counters["mpi_ms"] = mpi_s * 1e3;
  state.counters["fraction_of_mpi"] = n % 2 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
  state.counters["fraction_of_mpi_means"] = mpi_s / tessel_s;
}

void BM_all_reduce(benchmark::State& state) {
  Setup s;
  auto g = s.group();
  Box held{{0, floats}};
  time_and_report(state, [&] { collectives().all_reduce(DType::float32, ReduceOp::sum, g, held); },
                  [&] { MPI_Allreduce(s.in.data(), s.out.data(), floats, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
}

void BM_reduce_scatter(benchmark::State& state) {
  Setup s;
  auto g = s.group();
  Box held{{0, floats}};
  std::int64_t piece = floats / s.n;
  std::vector<Box> pieces;
  for (int p = 0; p < s.n; ++p) pieces.push_back(Box{{p * piece, (p + 1) * piece}});
  time_and_report(state, [&] { collectives().reduce_scatter(DType::float32, ReduceOp::sum, g, held, pieces); },
                  [&] {
                    MPI_Reduce_scatter_block(s.in.data(), s.out.data(), static_cast<int>(piece), MPI_FLOAT, MPI_SUM,
                                             MPI_COMM_WORLD);
                  });
}

void BM_all_gather(benchmark::State& state) {
  Setup s;
  auto g = s.group();
  // Both write the same output buffer (one after the other): two buffers of 256 MB can differ in
  // speed by themselves (which pages the kernel gave each), by 15-25 % here.
  for (auto& m : g)
    if (m.out) m.out = reinterpret_cast<std::byte*>(s.mpi_out.data());
  std::vector<Box> pieces;
  for (int p = 0; p < s.n; ++p) pieces.push_back(Box{{p * floats, (p + 1) * floats}});
  time_and_report(state, [&] { collectives().all_gather(DType::float32, g, pieces); },
                  [&] {
                    MPI_Allgather(s.in.data(), static_cast<int>(floats), MPI_FLOAT, s.mpi_out.data(),
                                  static_cast<int>(floats), MPI_FLOAT, MPI_COMM_WORLD);
                  });
}

void BM_all_to_all(benchmark::State& state) {
  Setup s;
  auto g = s.group();
  // Member p holds row block p of an (n x n) grid of chunks and receives column block p.
  std::int64_t chunk = floats / s.n;
  std::vector<Box> in_boxes, out_boxes;
  for (int p = 0; p < s.n; ++p) {
    in_boxes.push_back(Box{{p, p + 1}, {0, s.n * chunk}});
    out_boxes.push_back(Box{{0, s.n}, {p * chunk, (p + 1) * chunk}});
  }
  time_and_report(state, [&] { collectives().all_to_all(DType::float32, g, in_boxes, out_boxes); },
                  [&] {
                    MPI_Alltoall(s.in.data(), static_cast<int>(chunk), MPI_FLOAT, s.out.data(),
                                 static_cast<int>(chunk), MPI_FLOAT, MPI_COMM_WORLD);
                  });
}

void BM_collective_permute(benchmark::State& state) {
  Setup s;
  auto g = s.group();
  std::vector<Box> boxes(static_cast<std::size_t>(s.n), Box{{0, floats}});
  std::vector<PermutePair> pairs;
  for (int p = 0; p < s.n; ++p) pairs.push_back({p, (p + 1) % s.n});
  int to = (s.me + 1) % s.n, from = (s.me + s.n - 1) % s.n;
  time_and_report(state, [&] { collectives().collective_permute(DType::float32, g, boxes, boxes, pairs); },
                  [&] {
                    MPI_Sendrecv(s.in.data(), static_cast<int>(floats), MPI_FLOAT, to, 1, s.out.data(),
                                 static_cast<int>(floats), MPI_FLOAT, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                  });
}

constexpr int iterations = 15;
BENCHMARK(BM_all_reduce)->Iterations(iterations)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_reduce_scatter)->Iterations(iterations)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_all_gather)->Iterations(iterations)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_all_to_all)->Iterations(iterations)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_collective_permute)->Iterations(iterations)->UseManualTime()->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  tessel::ScopeGuard guard(argc, argv);
  if (tessel::local_device_count() != 1) {
    std::fprintf(stderr, "bench_mpi_collectives: run one device per process (TESSEL_NUM_DEVICES=1)\n");
    return 1;
  }
  return tessel::bench::run_reporting_on_rank_zero(argc, argv);
}
