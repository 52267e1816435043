// The cost of an uneven split (blocks of ceil(n/k), the last device's short): each benchmark runs
// the same work on a shape the mesh divides and on the shape one element short of it, interleaved
// in one loop, and reports uneven_over_even = uneven time / even time (target <= 1.1) beside the
// collectives each plan runs (the uneven plan must run no more than the even one).
//  - the fused chain tanh(a * x + b) * 0.5 - x / 3 over 2^25 float32 on 8 devices, with its
//    fraction of a STREAM triad (bytes: 3 reads + 1 write) timed in the same loop;
//  - the Megatron MLP relu(x @ W1) @ W2 (batch 4096, model 1024, hidden 4096 or 4095) over a (4, 2)
//    ('dp', 'mp') mesh, the hidden dimension split over 'mp', with its fraction of the FMA peak of
//    the BLAS kernels' vector width (measure/fma_peak.hpp), timed in the same loop.
#include <benchmark/benchmark.h>

#include <array>
#include <string>

#include "fma_peak.hpp"
#include "interleaved.hpp"
#include "triad.hpp"
#include "tessel/runtime/local_dot.hpp"
#include "tessel/tessel.hpp"

namespace {

using namespace tessel;

// Collectives a plan runs (reshards included).
double collectives(plan::Plan const& p) {
  using plan::Collective;
  return p.count(Collective::all_reduce) + p.count(Collective::all_gather) + p.count(Collective::reduce_scatter) +
         p.count(Collective::all_to_all) + p.count(Collective::collective_permute);
}

void BM_uneven_chain(benchmark::State& state) {
  constexpr std::int64_t n = std::int64_t{1} << 25;
  NamedSharding s(make_mesh({8}, {"x"}), P("x"));
  auto inputs = [&](std::int64_t size) {
    return std::array{random::normal(PRNGKey(0), {size}, s), random::normal(PRNGKey(1), {size}, s),
                      random::normal(PRNGKey(2), {size}, s)};
  };
  auto even = inputs(n), uneven = inputs(n - 1);
  auto chain = [](auto const& v) { return tanh(v[0] * v[1] + v[2]) * 0.5f - v[1] / 3.0f; };
  measure::Triad triad(n);
  auto [even_s, uneven_s, triad_s] = bench::time_interleaved(
      state, [&] { benchmark::DoNotOptimize(eval(chain(even))); },
      [&] { benchmark::DoNotOptimize(eval(chain(uneven))); }, triad);
  state.counters["uneven_over_even"] = uneven_s / even_s;
  double const bytes = 4.0 * n * sizeof(float);
  state.counters["fraction_of_triad"] = (bytes / even_s) / (triad.bytes() / triad_s);
  state.counters["uneven_fraction_of_triad"] = (bytes / uneven_s) / (triad.bytes() / triad_s);
  state.counters["extra_collectives"] = collectives(plan_of(chain(uneven))) - collectives(plan_of(chain(even)));
}

void BM_uneven_megatron(benchmark::State& state) {
  constexpr std::int64_t batch = 4096, model = 1024, hidden = 4096;
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  auto make = [&](std::int64_t h) {
    return std::array{random::normal(PRNGKey(0), {batch, model}, NamedSharding(mesh, P("dp", None))),
                      random::normal(PRNGKey(1), {model, h}, NamedSharding(mesh, P(None, "mp"))),
                      random::normal(PRNGKey(2), {h, model}, NamedSharding(mesh, P("mp", None)))};
  };
  auto even = make(hidden), uneven = make(hidden - 1);
  auto mlp = [](auto const& v) { return matmul(relu(v[0].matmul(v[1])), v[2]); };
  auto on_even = [&] { benchmark::DoNotOptimize(eval(mlp(even))); };
  auto peak = measure::gemm_fma(detail::blas_info().f32_vector_bits);
  peak.calibrate_like(on_even);
  auto [even_s, uneven_s, peak_s] = bench::time_interleaved(
      state, on_even, [&] { benchmark::DoNotOptimize(eval(mlp(uneven))); }, peak);
  state.counters["uneven_over_even"] = uneven_s / even_s;
  double const peak_gflops = peak.flops() / peak_s / 1e9;
  state.counters["fraction_of_peak"] = 4.0 * batch * model * hidden / even_s / 1e9 / peak_gflops;
  state.counters["uneven_fraction_of_peak"] = 4.0 * batch * model * (hidden - 1) / uneven_s / 1e9 / peak_gflops;
  state.counters["extra_collectives"] = collectives(plan_of(mlp(uneven))) - collectives(plan_of(mlp(even)));
  state.SetLabel(std::string("peak: ") + peak.isa);
}

}  // namespace

BENCHMARK(BM_uneven_chain)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_uneven_megatron)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(3.0);
