// Pipeline parallelism (runtime/pipeline.hpp): a stack of 4 MLP stages (model 512, hidden 2048,
// with a residual) over a (2, 4) dp x pp mesh, batch 512 (256 rows per dp group), GPipe's forward
// schedule with m microbatches. Per m, in one interleaved loop: the pipelined call, the same stages
// unpipelined on the same devices (one microbatch: each stage runs the whole batch while the
// other three idle), and the FMA peak of the BLAS kernels' vector width.
// Counters:
//   bubble_measured  each step's time weighted by the share of stages idle in it, over the total
//   bubble_ideal     (p - 1) / (m + p - 1)
//   speedup_vs_unpipelined  the unpipelined call's time over the pipelined one's
//   samples_per_s, GFLOP_per_s (useful flops: 2 GEMMs per stage per sample) and fraction_of_peak.
// Every device computes at every step (SPMD), so on a host whose logical devices share the cores
// the bubble costs real time: the speedup tends to p m / (m + p - 1).
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>

#include "fma_peak.hpp"
#include "interleaved.hpp"
#include "tessel/runtime/local_dot.hpp"
#include "tessel/runtime/pipeline.hpp"
#include "tessel/tessel.hpp"

namespace {

using namespace tessel;
constexpr std::int64_t batch = 512, model = 512, hidden = 2048;
constexpr int stages = 4;

void BM_pipeline(benchmark::State& state) {
  int const m = static_cast<int>(state.range(0));
  auto mesh = make_mesh({2, stages}, {"dp", "pp"});
  auto on = [&](auto... spec) { return NamedSharding(mesh, P(spec...)); };
  Tensor<float> x = random::normal(PRNGKey(0), {batch, model}, on("dp", None));
  Tensor<float> w1 = random::normal(PRNGKey(1), {stages, model, hidden}, on("pp", None, None)) *
                     (1.0f / std::sqrt(static_cast<float>(model)));
  Tensor<float> w2 = random::normal(PRNGKey(2), {stages, hidden, model}, on("pp", None, None)) *
                     (1.0f / std::sqrt(static_cast<float>(hidden)));
  auto stage = [](auto const& a, auto const& b, auto const& h) { return matmul(relu(matmul(h, a)), b) + h; };
  std::vector<PartitionSpec> specs{P("pp", None, None), P("pp", None, None)};
  auto pipelined = pipeline(stage, mesh, specs, P("dp", None), {.axis = "pp", .microbatches = m});
  auto unpipelined = pipeline(stage, mesh, specs, P("dp", None), {.axis = "pp", .microbatches = 1});
  auto peak = measure::gemm_fma(detail::blas_info().f32_vector_bits);
  peak.calibrate_like([&] { benchmark::DoNotOptimize(unpipelined(w1, w2, x)); });
  double bubble = 0;
  auto [piped_s, plain_s, peak_s] = bench::time_interleaved(
      state,
      [&] {
        benchmark::DoNotOptimize(pipelined(w1, w2, x));
        bubble += pipelined.measured_bubble_fraction();
      },
      [&] { benchmark::DoNotOptimize(unpipelined(w1, w2, x)); }, peak);
  double const flops = 2.0 * 2.0 * batch * model * hidden * stages;
  double const peak_gflops = peak.flops() / peak_s / 1e9;
  state.counters["microbatches"] = m;
  state.counters["bubble_measured"] = bubble / static_cast<double>(state.iterations());
  state.counters["bubble_ideal"] = pipelined.schedule().bubble_fraction();
  state.counters["speedup_vs_unpipelined"] = plain_s / piped_s;
  state.counters["samples_per_s"] = batch / piped_s;
  state.counters["GFLOP_per_s"] = flops / piped_s / 1e9;
  state.counters["fraction_of_peak"] = flops / piped_s / 1e9 / peak_gflops;
  state.SetLabel(std::string("peak: ") + peak.isa);
}

}  // namespace

BENCHMARK(BM_pipeline)->Arg(1)->Arg(2)->Arg(4)->Arg(8)->Arg(16)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
