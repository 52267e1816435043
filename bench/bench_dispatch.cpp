// The fixed cost of a cached jit call: a tiny function (one elementwise op on 8 float32 elements
// sharded over 8 devices), so the time is plan look-up, allocation of the result and the kernel
// launches on all 8 devices together; and the same call planned by the compiler (static_jit: no
// look-up, the run's slots kept with the function). Counters us_per_call and allocs_per_call
// (operator new calls, counted by this binary's replacement), beside one bare Kokkos kernel's launch
// and fence (BM_bare_kernel_launch). BM_recorded_forward: a jitted body of
// eight evaluations, replayed from its recorded program against the body run as it is.
// BM_megatron_mlp_call and BM_gpt2_forward_call: a cached call of GPT-2's Megatron MLP block and of
// a tiny GPT-2's whole forward on (dp 2, mp 4), small enough that the ordering is the cost. Every
// benchmark counts, per call, what the runtime asked of the devices' queues (runtime/stream.hpp):
// launches (kernels, copies, GEMM batches, each on one device), events recorded, waits between
// devices, and host fences (of some devices, or of all). TESSEL_ASYNC=1 runs them with each
// device's work on a host thread of its own, as on GPU streams.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdint>

#include "../tests/support/allocation_counter.hpp"
#include "gpt2.hpp"
#include "interleaved.hpp"
#include "tessel/runtime/static_jit.hpp"
#include "tessel/runtime/stream.hpp"
#include "tessel/tessel.hpp"

namespace {

using namespace tessel;

// The queues' counts now (runtime/stream.hpp).
struct Ordering {
  double launches, events, waits, fences, graphs;
  static Ordering now() {
    auto const& c = detail::ordering_counts();
    return {static_cast<double>(c.launches.load()), static_cast<double>(c.events.load()),
            static_cast<double>(c.waits.load()), static_cast<double>(c.device_fences.load() + c.all_fences.load()),
            static_cast<double>(c.graph_launches.load())};
  }
};

void count_ordering(benchmark::State& state, Ordering const& before, double calls) {
  Ordering const after = Ordering::now();
  state.counters["launches_per_call"] = (after.launches - before.launches) / calls;
  state.counters["events_per_call"] = (after.events - before.events) / calls;
  state.counters["waits_per_call"] = (after.waits - before.waits) / calls;
  state.counters["fences_per_call"] = (after.fences - before.fences) / calls;
  // A replayed program run as one captured graph (runtime/program_graph.hpp; GPUs, or a host with
  // TESSEL_ASYNC=1 TESSEL_HOST_GRAPHS=1): its steps' launches are the graph's, not counted above.
  state.counters["graph_launches_per_call"] = (after.graphs - before.graphs) / calls;
}

// us_per_call, allocs_per_call and the ordering counts over the timed loop.
template <class Call>
void time_calls(benchmark::State& state, Call const& call) {
  long a0 = test::allocations();
  Ordering const o0 = Ordering::now();
  auto t0 = std::chrono::steady_clock::now();
  for (auto _ : state) call();
  double s_total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto n = static_cast<double>(state.iterations());
  state.counters["us_per_call"] = s_total / n * 1e6;
  state.counters["allocs_per_call"] = static_cast<double>(test::allocations() - a0) / n;
  count_ordering(state, o0, n);
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

// The floor under any call that runs a kernel: one bare Kokkos kernel over the 8 elements on a
// device's instance, and its fence (what a call's launch costs before tessel adds anything).
void BM_bare_kernel_launch(benchmark::State& state) {
  Kokkos::View<float*, MemSpace> v("v", 8);
  ExecSpace const exec = device(0).exec;
  time_calls(state, [&] {
    Kokkos::parallel_for("tessel::bench::bare_kernel", Kokkos::RangePolicy<ExecSpace>(exec, 0, 8),
                         KOKKOS_LAMBDA(std::int64_t i) { v(i) += 1.0f; });
    exec.fence();
  });
}

// A whole forward as one jitted call: 8 blocks of a tiny residual MLP layer (each one jitted
// evaluation, as a model's blocks are) on 8 devices. The recorded program's replay against the
// same body run as a plain function (each block's expression built, its plan looked up), in one
// interleaved loop: us_per_forward of each, replay_over_body, and the replay's steps.
void BM_recorded_forward(benchmark::State& state) {
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  auto x = random::normal(PRNGKey(1), {16, 16}, NamedSharding(mesh, P("dp")));
  auto w = random::normal(PRNGKey(2), {16, 16}, NamedSharding(mesh, P(None, "mp")));
  auto block = jit([](auto const& h, auto const& w) { return relu(h.matmul(w)) + h; });
  auto body = [&](Tensor<float> const& h0) {
    Tensor<float> h = h0;
    for (int l = 0; l < 8; ++l) h = block(h, w);
    return h;
  };
  auto forward = jit(body);
  (void)forward(x);  // records
  (void)body(x);
  auto [replay_s, body_s] = bench::time_interleaved(
      state, [&] { benchmark::DoNotOptimize(forward(x)); }, [&] { benchmark::DoNotOptimize(body(x)); });
  state.counters["replay_us_per_forward"] = replay_s * 1e6;
  state.counters["body_us_per_forward"] = body_s * 1e6;
  state.counters["replay_over_body"] = replay_s / body_s;
}

// GPT-2's Megatron MLP block (LayerNorm, two GEMMs with the hidden dimension over mp, gelu, the
// all-reduce, the residual) on (dp 2, mp 4): batch 4 x 16 tokens, embd 64, hidden 256.
struct MlpInputs {
  Mesh mesh = make_mesh({2, 4}, {"dp", "mp"});
  models::Gpt2Shardings s{mesh};
  static constexpr std::int64_t e = 64, f = 4 * e;
  Tensor<float> x = random::normal(PRNGKey(1), {4, 16, e}, s.batch);
  Tensor<float> g = random::normal(PRNGKey(2), {e}, s.replicated);
  Tensor<float> b = random::normal(PRNGKey(3), {e}, s.replicated);
  Tensor<float> w_fc = random::normal(PRNGKey(4), {e, f}, s.hidden_cols);
  Tensor<float> b_fc = random::normal(PRNGKey(5), {f}, s.hidden_bias);
  Tensor<float> w_proj = random::normal(PRNGKey(6), {f, e}, s.hidden_rows);
  Tensor<float> b_proj = random::normal(PRNGKey(7), {e}, s.replicated);
};

// A cached call of the block, a jitted expression (one plan run per call). Each call waits for
// its result.
void BM_megatron_mlp_call(benchmark::State& state) {
  MlpInputs const in;
  auto mlp = models::gpt2::mlp_block();
  (void)mlp(in.x, in.g, in.b, in.w_fc, in.b_fc, in.w_proj, in.b_proj, 1e-5);  // plans once
  time_calls(state, [&] { mlp(in.x, in.g, in.b, in.w_fc, in.b_fc, in.w_proj, in.b_proj, 1e-5).block_until_ready(); });
}

// The same block in a body that returns a Tensor: a recorded program, replayed as one captured
// graph where graphs are captured (a GPU; a host with TESSEL_ASYNC=1 TESSEL_HOST_GRAPHS=1).
void BM_megatron_mlp_program_call(benchmark::State& state) {
  MlpInputs const in;
  auto mlp = jit([](auto const& x, auto const& g, auto const& b, auto const& w_fc, auto const& b_fc,
                    auto const& w_proj, auto const& b_proj) {
    return Tensor<float>(x + (models::gpt2::mlp_hidden(x, g, b, w_fc, b_fc, w_proj, 1e-5) + b_proj));
  });
  (void)mlp(in.x, in.g, in.b, in.w_fc, in.b_fc, in.w_proj, in.b_proj);  // records
  (void)mlp(in.x, in.g, in.b, in.w_fc, in.b_fc, in.w_proj, in.b_proj);  // captures, where graphs are
  time_calls(state, [&] { mlp(in.x, in.g, in.b, in.w_fc, in.b_fc, in.w_proj, in.b_proj).block_until_ready(); });
}

// A cached call of a tiny GPT-2's whole forward (2 blocks, embd 64, 4 heads, vocabulary 512) on
// (dp 2, mp 4), batch 2 x 16 tokens: one jitted call, replayed from its recorded program.
void BM_gpt2_forward_call(benchmark::State& state) {
  models::Gpt2Config c;
  c.vocab = 512;
  c.positions = 32;
  c.embd = 64;
  c.heads = 4;
  c.layers = 2;
  auto const model = models::random_gpt2<float>(c, make_mesh({2, 4}, {"dp", "mp"}));
  std::vector<std::int32_t> ids(2 * 16);
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>(i * 7 % 512);
  Tensor<std::int32_t> tokens = device_put(ids, Shape{2, 16});
  auto forward = models::jit_forward(model);
  (void)forward(tokens);  // records
  time_calls(state, [&] { forward(tokens).block_until_ready(); });
}

}  // namespace

BENCHMARK(BM_megatron_mlp_call)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_megatron_mlp_program_call)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_gpt2_forward_call)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_recorded_forward)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_cached_jit_call)->Unit(benchmark::kMicrosecond);
#if TESSEL_STATIC_JIT
BENCHMARK(BM_static_jit_call)->Unit(benchmark::kMicrosecond);
#endif
BENCHMARK(BM_plan_lookup_only)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_bare_kernel_launch)->Unit(benchmark::kMicrosecond);

