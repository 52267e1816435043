// The normalizations of model code against memory bandwidth and the machine's arithmetic, in one run
// each (bench/row_kernel.hpp: fraction_of_triad, and the same kernel from cache):
//  - LayerNorm + gelu: gelu((x - mean(x)) * rsqrt(var(x) + 1e-5) * g + b) over the last axis;
//  - the same with fast_math::gelu (the opt-in, expr/fast_math.hpp);
//  - RMSNorm: flax's x * (rsqrt(mean(x^2) + 1e-6) * g);
// on x of (8192, 1024) float32 with rows sharded over 8 devices (devices:8) or on one device
// (devices:1: one logical device, one GPU stream), g and b of (1024) replicated.
// Bytes counted: one read and one write of x (g and b stay in cache).
#include <benchmark/benchmark.h>

#include "row_kernel.hpp"
#include "tessel/expr/fast_math.hpp"
#include "tessel/tessel.hpp"

namespace {

using namespace tessel;
constexpr std::int64_t rows = 8192, cols = 1024;

template <class F>
void time_normalization(benchmark::State& state, F normalize) {
  auto mesh = state.range(0) == 1 ? make_mesh({1}, {"x"}, {0}) : make_mesh({8}, {"x"});
  auto g = random::uniform(PRNGKey(1), {cols}, NamedSharding(mesh, P()), 0.5f, 1.5f);
  auto b = random::normal(PRNGKey(2), {cols}, NamedSharding(mesh, P()));
  bench::time_row_kernel(state, rows, cols, [&](std::int64_t n) {
    auto x = random::normal(PRNGKey(0), {n, cols}, NamedSharding(mesh, P("x", None)));
    return [=] { benchmark::DoNotOptimize(eval(normalize(x, g, b))); };
  });
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

BENCHMARK(BM_layer_norm_gelu)->ArgName("devices")->Arg(8)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_layer_norm_gelu_fast)->ArgName("devices")->Arg(8)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_rms_norm)->ArgName("devices")->Arg(8)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
