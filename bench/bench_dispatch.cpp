// The fixed cost of a cached jit call: a tiny function (one elementwise op on 8 float32 elements
// sharded over 8 devices), so the time is plan look-up, allocation of the result and the kernel
// launches on all 8 devices together. Counter us_per_call.
#include <benchmark/benchmark.h>

#include <chrono>

#include "tessel/tessel.hpp"

namespace {

using namespace tessel;

void BM_cached_jit_call(benchmark::State& state) {
  NamedSharding s(make_mesh({8}, {"x"}), P("x"));
  auto x = random::normal(PRNGKey(0), {8}, s);
  auto f = jit([](auto const& v) { return v + 1.0f; });
  benchmark::DoNotOptimize(f(x));  // plans once
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) benchmark::DoNotOptimize(f(x));
  double s_total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  state.counters["us_per_call"] = s_total / static_cast<double>(state.iterations()) * 1e6;
}

void BM_plan_lookup_only(benchmark::State& state) {
  NamedSharding s(make_mesh({8}, {"x"}), P("x"));
  auto x = random::normal(PRNGKey(0), {8}, s);
  (void)plan_of(x + 1.0f);
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) benchmark::DoNotOptimize(&plan_of(x + 1.0f));
  double s_total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  state.counters["us_per_call"] = s_total / static_cast<double>(state.iterations()) * 1e6;
}

}  // namespace

BENCHMARK(BM_cached_jit_call)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_plan_lookup_only)->Unit(benchmark::kMicrosecond);

