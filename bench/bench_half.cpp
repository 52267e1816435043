// Half precision against float32, each pair timed interleaved in one loop (bench/interleaved.hpp)
// with the machine's own limit in the same loop:
//  - a 6-op fused chain, tanh(a * x + b) * 0.5 - x / 3, over 2^25 elements on 8 devices, in
//    bfloat16 and float32, with the bfloat16 chain's fraction of a STREAM triad counted in its own
//    (2-byte) bytes (3 reads + 1 write) and its elements per second over float32's;
//  - softmax and LayerNorm over (4096, 4096) rows on 8 devices, bfloat16 over float32;
//  - the Megatron MLP relu(x @ W1) @ W2 (4096 x 1024 x 4096) on (4, 2) ('dp', 'mp') in bfloat16
//    (the 16-bit GEMM, oneDNN's on hosts: `half_gemms` in the header says which) over float32,
//    with the bfloat16 block's fraction of the FMA peak.
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

template <class T>
std::array<Tensor<T>, 3> inputs(Shape const& shape, NamedSharding const& s) {
  return {random::normal<T>(PRNGKey(0), shape, s), random::normal<T>(PRNGKey(1), shape, s),
          random::normal<T>(PRNGKey(2), shape, s)};
}

void BM_half_chain(benchmark::State& state) {
  constexpr std::int64_t n = std::int64_t{1} << 25;
  NamedSharding s(make_mesh({8}, {"x"}), P("x"));
  auto h = inputs<bfloat16>({n}, s);
  auto f = inputs<float>({n}, s);
  auto chain = [](auto const& v) { return tanh(v[0] * v[1] + v[2]) * 0.5 - v[1] / 3; };
  measure::Triad triad(n);
  auto [half_s, float_s, triad_s] = bench::time_interleaved(
      state, [&] { benchmark::DoNotOptimize(eval(chain(h))); }, [&] { benchmark::DoNotOptimize(eval(chain(f))); },
      triad);
  double const half_bytes = 4.0 * n * sizeof(bfloat16);
  state.counters["bf16_fraction_of_triad"] = (half_bytes / half_s) / (triad.bytes() / triad_s);
  state.counters["f32_fraction_of_triad"] = (4.0 * n * sizeof(float) / float_s) / (triad.bytes() / triad_s);
  state.counters["bf16_speedup"] = float_s / half_s;
}

template <int Which>
void BM_half_rows(benchmark::State& state) {
  constexpr std::int64_t rows = 4096, cols = 4096;
  NamedSharding s(make_mesh({8}, {"x"}), P("x", None));
  auto h = inputs<bfloat16>({rows, cols}, s);
  auto f = inputs<float>({rows, cols}, s);
  auto op = [](auto const& v) {
    if constexpr (Which == 0) return softmax(v[0], -1);
    else return layer_norm(v[0], v[1], v[2]);
  };
  measure::Triad triad(rows * cols);
  auto [half_s, float_s, triad_s] = bench::time_interleaved(
      state, [&] { benchmark::DoNotOptimize(eval(op(h))); }, [&] { benchmark::DoNotOptimize(eval(op(f))); }, triad);
  double const passes = Which == 0 ? 2.0 : 4.0;  // softmax reads x and writes; layer_norm also reads scale, bias
  state.counters["bf16_fraction_of_triad"] =
      (passes * rows * cols * sizeof(bfloat16) / half_s) / (triad.bytes() / triad_s);
  state.counters["f32_fraction_of_triad"] = (passes * rows * cols * sizeof(float) / float_s) / (triad.bytes() / triad_s);
  state.counters["bf16_speedup"] = float_s / half_s;
}

void BM_half_megatron(benchmark::State& state) {
  constexpr std::int64_t batch = 4096, model = 1024, hidden = 4096;
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  auto make = [&](auto tag) {
    using T = decltype(tag);
    return std::array{random::normal<T>(PRNGKey(0), {batch, model}, NamedSharding(mesh, P("dp", None))),
                      random::normal<T>(PRNGKey(1), {model, hidden}, NamedSharding(mesh, P(None, "mp"))),
                      random::normal<T>(PRNGKey(2), {hidden, model}, NamedSharding(mesh, P("mp", None)))};
  };
  auto h = make(bfloat16{});
  auto f = make(float{});
  auto mlp = [](auto const& v) { return matmul(relu(matmul(v[0], v[1])), v[2]); };
  auto on_half = [&] { benchmark::DoNotOptimize(eval(mlp(h))); };
  auto peak = measure::gemm_fma(detail::blas_info().f32_vector_bits);
  peak.calibrate_like(on_half);
  auto [half_s, float_s, peak_s] = bench::time_interleaved(
      state, on_half, [&] { benchmark::DoNotOptimize(eval(mlp(f))); }, peak);
  double const peak_gflops = peak.flops() / peak_s / 1e9, flops = 4.0 * batch * model * hidden;
  state.counters["bf16_fraction_of_peak"] = flops / half_s / 1e9 / peak_gflops;
  state.counters["f32_fraction_of_peak"] = flops / float_s / 1e9 / peak_gflops;
  state.counters["bf16_over_f32_time"] = half_s / float_s;
  state.SetLabel(std::string("peak: ") + peak.isa + ", blas core " + detail::blas_info().core);
}

}  // namespace

BENCHMARK(BM_half_chain)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_half_rows<0>)->Name("BM_half_softmax")->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_half_rows<1>)->Name("BM_half_layer_norm")->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_half_megatron)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(3.0);
