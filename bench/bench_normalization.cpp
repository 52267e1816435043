// The normalizations of model code against memory bandwidth, in one run each:
//  - LayerNorm + gelu: gelu((x - mean(x)) * rsqrt(var(x) + 1e-5) * g + b) over the last axis;
//  - the same with fast_math::gelu (the opt-in, expr/fast_math.hpp);
//  - RMSNorm: flax's x * (rsqrt(mean(x^2) + 1e-6) * g);
// on x of (8192, 1024) float32 with rows sharded over 8 devices, g and b of (1024) replicated.
// Bytes counted: one read and one write of x (g and b stay in cache). fraction_of_triad compares
// that rate with a STREAM triad (bench/triad.hpp) timed interleaved in the same loop.
#include <benchmark/benchmark.h>

#include <cmath>

#include "interleaved.hpp"
#include "tessel/expr/fast_math.hpp"
#include "tessel/tessel.hpp"
#include "triad.hpp"

namespace {

using namespace tessel;
constexpr std::int64_t rows = 8192, cols = 1024;

template <class F>
void time_normalization(benchmark::State& state, F&& normalize) {
  auto mesh = make_mesh({8}, {"x"});
  auto x = random::normal(PRNGKey(0), {rows, cols}, NamedSharding(mesh, P("x", None)));
  auto g = random::uniform(PRNGKey(1), {cols}, NamedSharding(mesh, P()), 0.5f, 1.5f);
  auto b = random::normal(PRNGKey(2), {cols}, NamedSharding(mesh, P()));
  bench::Triad triad(rows * cols);
  auto call = [&] { benchmark::DoNotOptimize(eval(normalize(x, g, b))); };
  auto [call_s, triad_s] = bench::time_interleaved(state, call, triad);
  double const bytes = 2.0 * rows * cols * sizeof(float);
  state.counters["GB_per_s"] = bytes / call_s / 1e9;
  state.counters["triad_GB_per_s"] = triad.bytes() / triad_s / 1e9;
  state.counters["fraction_of_triad"] = (bytes / call_s) / (triad.bytes() / triad_s);
}

void BM_layer_norm_gelu(benchmark::State& state) {
  time_normalization(state, [](auto const& x, auto const& g, auto const& b) {
    return gelu((x - mean(x, -1, true)) * rsqrt(var(x, -1, true) + 1e-5f) * g + b);
  });
}

// The same with the opt-in fast gelu (expr/fast_math.hpp: within 5e-7 relative of the formula,
// not JAX's bits).
void BM_layer_norm_gelu_fast(benchmark::State& state) {
  time_normalization(state, [](auto const& x, auto const& g, auto const& b) {
    return fast_math::gelu((x - mean(x, -1, true)) * rsqrt(var(x, -1, true) + 1e-5f) * g + b);
  });
}

void BM_rms_norm(benchmark::State& state) {
  time_normalization(state, [](auto const& x, auto const& g, auto const&) { return rms_norm(x, g); });
}

}  // namespace

BENCHMARK(BM_layer_norm_gelu)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_layer_norm_gelu_fast)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_rms_norm)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
