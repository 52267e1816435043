// The Megatron MLP block relu(x @ W1) @ W2 (batch 4096, model 1024, hidden 4096, float32) on 8
// logical devices, x on P('dp', None), W1 on P(None, 'mp'), W2 on P('mp', None) over a (4, 2) mesh,
// against the same two GEMMs done unsharded by the backend's BLAS alone (bench/standalone_gemm.hpp:
// OpenBLAS from the main thread, all host threads, on hosts; cuBLAS on CUDA), interleaved in one
// run. One benchmark per way of scheduling the devices' GEMMs (tessel::detail::GemmSchedule;
// `automatic` is the default), on the 8 devices (devices:8); `automatic` also on one device
// (devices:1: the same axes of size 1, the whole block one GEMM pair on one logical device).
// Counters: fraction_of_blas = unsharded BLAS time / tessel time (1.0 = no overhead from sharding);
// fraction_of_peak = GFLOP/s / the FMA peak of the float32 GEMMs' vector width, measured in this
// binary on all threads, interleaved in the same loop (peak_GFLOP_per_s; measure/fma_peak.hpp);
// blas_fraction_of_peak the same for the unsharded calls; machine_peak_GFLOP_per_s the widest
// vector's peak (AVX-512 where the CPU has it, whatever OPENBLAS_CORETYPE chose). The BLAS, its core type
// and threads are in the run's context (bench/main.cpp).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "fma_peak.hpp"
#include "interleaved.hpp"
#include "standalone_gemm.hpp"
#include "tessel/runtime/local_dot.hpp"
#include "tessel/tessel.hpp"

namespace {

using namespace tessel;
using detail::GemmSchedule;
constexpr int batch = 4096, model = 1024, hidden = 4096;

void BM_megatron_mlp(benchmark::State& state, GemmSchedule schedule) {
  // The (4, 2) mesh of 8 devices, or the same axes over one device (devices:1).
  auto mesh = state.range(0) == 1 ? make_mesh({1, 1}, {"dp", "mp"}, {0}) : make_mesh({4, 2}, {"dp", "mp"});
  auto x = random::normal(PRNGKey(0), {batch, model}, NamedSharding(mesh, P("dp", None)));
  auto w1 = random::normal(PRNGKey(1), {model, hidden}, NamedSharding(mesh, P(None, "mp")));
  auto w2 = random::normal(PRNGKey(2), {hidden, model}, NamedSharding(mesh, P("mp", None)));
  auto mlp = jit([](auto const& x, auto const& w1, auto const& w2) { return matmul(relu(x.matmul(w1)), w2); });

  // The unsharded GEMMs by the backend's BLAS alone, on copies of the same operands.
  bench::StandaloneGemms unsharded;
  float *dx = unsharded.buffer(x.to_host()), *dw1 = unsharded.buffer(w1.to_host()), *dw2 = unsharded.buffer(w2.to_host());
  float *dh = unsharded.buffer(std::int64_t{batch} * hidden), *dy = unsharded.buffer(std::int64_t{batch} * model);
  unsharded.group({{batch, hidden, model, dx, dw1, dh, false, true}});
  unsharded.group({{batch, model, hidden, dh, dw2, dy, false, true}});
  auto sharded = [&] { benchmark::DoNotOptimize(mlp(x, w1, w2)); };
  // The FMA peaks, timed in the same loop: of the BLAS kernels' vector width, and of the widest.
  auto peak = measure::gemm_fma(detail::blas_info().f32_vector_bits), widest = measure::avx512_fma();
  if (!widest.chains) widest = peak;
  peak.calibrate_like(sharded);
  widest.calibrate_like(sharded);
  auto const previous = detail::gemm_schedule();
  detail::set_gemm_schedule(schedule);
  auto [tessel_s, blas_s, peak_s, widest_s] = bench::time_interleaved(state, sharded, unsharded, peak, widest);
  // The result under this schedule against relu(x @ W1) @ W2 by the unsharded GEMMs (the timed
  // calls leave out the relu: they time the GEMMs alone).
  std::vector<float> y = mlp(x, w1, w2).to_host();
  detail::set_gemm_schedule(previous);
  // relu(x @ W1) @ W2 by the standalone GEMMs: x @ W1 as the timed calls left it in dh, the relu
  // on the host.
  std::vector<float> hh = bench::StandaloneGemms::to_host(dh, static_cast<std::size_t>(batch) * hidden);
  for (auto& v : hh) v = std::max(v, 0.0f);
  bench::StandaloneGemms second;
  float *relu_h = second.buffer(hh), *ry = second.buffer(std::int64_t{batch} * model);
  second.group({{batch, model, hidden, relu_h, dw2, ry, false, true}});
  second();
  std::vector<float> hy = bench::StandaloneGemms::to_host(ry, y.size());
  float err = 0, scale = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    err = std::max(err, std::abs(y[i] - hy[i]));
    scale = std::max(scale, std::abs(hy[i]));
  }
  state.counters["max_rel_error"] = err / scale;
  if (!(err <= 1e-4f * scale)) state.SkipWithError("the sharded result differs from the unsharded GEMMs'");
  double const flops = 2.0 * 2.0 * batch * model * hidden, peak_gflops = peak.flops() / peak_s / 1e9;
  state.counters["fraction_of_blas"] = blas_s / tessel_s;
  state.counters["GFLOP_per_s"] = flops / tessel_s / 1e9;
  state.counters["blas_GFLOP_per_s"] = flops / blas_s / 1e9;
  state.counters["peak_GFLOP_per_s"] = peak_gflops;
  state.counters["fraction_of_peak"] = flops / tessel_s / 1e9 / peak_gflops;
  state.counters["blas_fraction_of_peak"] = flops / blas_s / 1e9 / peak_gflops;
  state.counters["machine_peak_GFLOP_per_s"] = widest.flops() / widest_s / 1e9;
  state.SetLabel(std::string("peak: ") + peak.isa + ", machine peak: " + widest.isa);
}

}  // namespace

BENCHMARK_CAPTURE(BM_megatron_mlp, automatic, GemmSchedule::automatic)
    ->ArgName("devices")->Arg(8)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(3.0);
BENCHMARK_CAPTURE(BM_megatron_mlp, devices_in_parallel, GemmSchedule::devices_in_parallel)
    ->ArgName("devices")->Arg(8)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(3.0);
BENCHMARK_CAPTURE(BM_megatron_mlp, one_at_a_time, GemmSchedule::one_at_a_time)
    ->ArgName("devices")->Arg(8)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(3.0);
