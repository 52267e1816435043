// A Llama 3-style decoder (models/llama.hpp) with random weights: vocabulary 32003, 4 layers,
// hidden 512, 8 query heads over 2 KV heads (head_dim 64), SwiGLU 1536, rope theta 500000, float32
// and bfloat16 (<bfloat16>), batch 2; Megatron over 'mp' and the batch over 'dp' on the (2, 4)
// mesh, or one device.
//
//   BM_llama_prefill/<devices>/<kept>    the forward of 2 x 128 prompt tokens into a fresh cache,
//                                        with the logits of every position (kept 0) or of the
//                                        last one (kept 1: what generate's prefill computes)
//   BM_llama_decode/<devices>/<cache>/<donated>/<windowed>
//                                        one decode step, the recorded program models::generate
//                                        replays per token, with a cache of <cache> positions (the
//                                        step's position in its middle); donated 1: the caches are
//                                        donated (runtime/donate.hpp) and written in place, as
//                                        generate does; 0: each write copies the layer's cache;
//                                        windowed 1: attention reads the cache up to the position
//                                        rounded up to 128 (llama::attention_window), as generate
//                                        does; 0: the whole cache
//
// Counters: tokens_per_s; collectives per call (counted by the runtime); cache_MiB, the keys and
// values of every layer; decode: attended, the cache positions attention reads, and
// device_MB_per_token, what one device reads and writes per token in a step (the cost analysis
// of the steps a profiled call ran: an in-place cache write counts its new position only). A
// step's time and bytes against its cache length show what grows with the cache.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "llama.hpp"
#include "tessel/tessel.hpp"
#include "tessel/tools/profile.hpp"

namespace {

using namespace tessel;
constexpr std::int64_t batch = 2, prompt_len = 128;

models::LlamaConfig config() {
  models::LlamaConfig c;
  c.vocab = 32003, c.hidden = 512, c.intermediate = 1536, c.layers = 4, c.heads = 8, c.kv_heads = 2, c.head_dim = 64;
  c.max_positions = 4096, c.rope_theta = 500000;
  return c;
}

Mesh mesh_of(std::int64_t devices) {
  return devices == 1 ? make_mesh({1, 1}, {"dp", "mp"}, {0}) : make_mesh({2, 4}, {"dp", "mp"});
}

Tensor<std::int32_t> tokens(Mesh const& mesh, std::int64_t n, std::int64_t vocab) {
  std::mt19937 rng(0);
  std::vector<std::int32_t> ids(static_cast<std::size_t>(batch * n));
  for (auto& id : ids) id = static_cast<std::int32_t>(rng() % static_cast<std::uint32_t>(vocab));
  return device_put(ids, Shape{batch, n}, NamedSharding(mesh, P()));
}

template <class T>
void report(benchmark::State& state, ExecutionCounts const& before, ExecutionCounts const& after, double tokens,
            models::KvCache<T> const& cache) {
  long collectives = 0;
  for (auto k : plan::all_collectives) collectives += after[k] - before[k];
  double bytes = 0;
  for (auto const& t : cache.kv) bytes += static_cast<double>(t.size()) * sizeof(T);
  state.counters["tokens_per_s"] = benchmark::Counter(tokens * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["collectives"] = static_cast<double>(collectives);
  state.counters["cache_MiB"] = bytes / (1 << 20);
}

template <class T>
void BM_llama_prefill(benchmark::State& state) {
  auto const mesh = mesh_of(state.range(0));
  auto const model = models::random_llama<T>(config(), mesh);
  auto const ids = tokens(mesh, prompt_len, model.config.vocab);
  auto run = [&] {
    auto cache = models::make_cache(model, batch, prompt_len);
    models::forward(model, ids, &cache, state.range(1)).block_until_ready();
    return cache;
  };
  (void)run();  // plans
  auto const before = execution_counts();
  auto cache = run();
  auto const after = execution_counts();
  for (auto _ : state) (void)run();
  report(state, before, after, static_cast<double>(batch * prompt_len), cache);
}

template <class T>
void BM_llama_decode(benchmark::State& state) {
  auto const mesh = mesh_of(state.range(0));
  std::int64_t const room = state.range(1);
  auto const model = models::random_llama<T>(config(), mesh);
  auto cache = models::make_cache(model, batch, room);
  cache.length = room / 2;
  auto const ids = tokens(mesh, 1, model.config.vocab);
  auto const position = device_put(std::vector<std::int32_t>{static_cast<std::int32_t>(cache.length)}, Shape{},
                                   NamedSharding(mesh, P()));
  bool const donated = state.range(2) != 0;
  std::int64_t const window = state.range(3) != 0 ? models::llama::attention_window(cache.length, room) : room;
  auto const step = models::jit_decode_step(model, window);
  auto run = [&] {
    auto results = step(ids, position, donated ? donate(cache.kv) : cache.kv);
    results.front().block_until_ready();
    std::copy(results.begin() + 1, results.end(), cache.kv.begin());
    return results;
  };
  (void)run();  // records the step
  auto const before = execution_counts();
  (void)run();
  auto const after = execution_counts();
  Profile const profiled = profile(step, ids, position, cache.kv);  // (its bytes are the plans', donated or not)
  double bytes = 0;
  for (auto const& row : profiled.rows) bytes += row.bytes_read + row.bytes_written;
  for (auto _ : state) (void)run();
  report(state, before, after, static_cast<double>(batch), cache);
  state.counters["attended"] = static_cast<double>(window);
  state.counters["device_MB_per_token"] = bytes / static_cast<double>(batch) / 1e6;
}

BENCHMARK(BM_llama_prefill<float>)
    ->Args({8, 0})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_llama_decode<float>)
    ->Args({8, 256, 1, 1})
    ->Args({8, 2048, 1, 1})
    ->Args({8, 2048, 1, 0})
    ->Args({8, 2048, 0, 0})
    ->Args({1, 256, 1, 1})
    ->Args({1, 2048, 1, 1})
    ->Args({1, 2048, 1, 0})
    ->Args({1, 2048, 0, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_llama_prefill<bfloat16>)
    ->Args({8, 0})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_llama_decode<bfloat16>)
    ->Args({8, 256, 1, 1})
    ->Args({8, 2048, 1, 1})
    ->Args({1, 256, 1, 1})
    ->Args({1, 2048, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
