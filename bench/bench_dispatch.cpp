// The fixed cost of a cached jit call: a tiny function (one elementwise op on 8 float32 elements
// sharded over 8 devices), so the time is plan look-up, allocation of the result and the kernel
// launches on all 8 devices together; and the same call planned by the compiler (static_jit: no
// look-up, the run's slots kept with the function). Counters us_per_call and allocs_per_call
// (operator new calls, counted by this binary's replacement).
#include <benchmark/benchmark.h>

#include <chrono>

#include "../tests/support/allocation_counter.hpp"
#include "tessel/runtime/static_jit.hpp"
#include "tessel/tessel.hpp"

namespace {

using namespace tessel;

// us_per_call and allocs_per_call over the timed loop.
template <class Call>
void time_calls(benchmark::State& state, Call const& call) {
  long a0 = test::allocations();
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) call();
  double s_total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto n = static_cast<double>(state.iterations());
  state.counters["us_per_call"] = s_total / n * 1e6;
  state.counters["allocs_per_call"] = static_cast<double>(test::allocations() - a0) / n;
}

constexpr auto add_one = [](auto const& v) { return v + 1.0f; };

#if TESSEL_STATIC_JIT  // nvcc cannot plan in constexpr (runtime/static_jit.hpp)
struct Tiny {
  static constexpr MeshAxes mesh{{8}, {"x"}};
  static constexpr std::tuple args{Arg<float>{{8}, P("x")}};
};

void BM_static_jit_call(benchmark::State& state) {
  NamedSharding s(make_mesh({8}, {"x"}), P("x"));
  auto x = random::normal(PRNGKey(0), {8}, s);
  auto f = static_jit<Tiny>(add_one);
  static_assert(decltype(f)::plan.kernels() == 1 && decltype(f)::plan.collectives() == 0);
  benchmark::DoNotOptimize(f(x));  // binds to the devices once
  time_calls(state, [&] { benchmark::DoNotOptimize(f(x)); });
}
#endif

void BM_cached_jit_call(benchmark::State& state) {
  NamedSharding s(make_mesh({8}, {"x"}), P("x"));
  auto x = random::normal(PRNGKey(0), {8}, s);
  auto f = jit(add_one);
  benchmark::DoNotOptimize(f(x));  // plans once
  time_calls(state, [&] { benchmark::DoNotOptimize(f(x)); });
}

void BM_plan_lookup_only(benchmark::State& state) {
  NamedSharding s(make_mesh({8}, {"x"}), P("x"));
  auto x = random::normal(PRNGKey(0), {8}, s);
  (void)plan_of(x + 1.0f);
  time_calls(state, [&] { benchmark::DoNotOptimize(&plan_of(x + 1.0f)); });
}

}  // namespace

BENCHMARK(BM_cached_jit_call)->Unit(benchmark::kMicrosecond);
#if TESSEL_STATIC_JIT
BENCHMARK(BM_static_jit_call)->Unit(benchmark::kMicrosecond);
#endif
BENCHMARK(BM_plan_lookup_only)->Unit(benchmark::kMicrosecond);

