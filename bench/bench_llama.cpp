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
// values of every layer.
// Prefill, timed interleaved with the machine's limits in one loop (bench/interleaved.hpp; the
// model's calls 8 at a time, back to back):
// GFLOP_per_s of the model's GEMMs (2 flops per multiply-add; attention's masked half counted,
// as it is computed; per call, all devices together), fraction_of_peak against the float32 FMA
// peak of the vector width float32 GEMMs run at (a bfloat16 GEMM on AMX can exceed it), and the
// same GEMMs on one device through the BLAS alone (bench/standalone_gemm.hpp): blas_fraction_of_peak
// is the most the forward could reach here, fraction_of_blas how much of it it does.
// Decode: attended, the cache positions attention reads; device_MB_per_token, what one device
// reads and writes per token in a step (the cost analysis of the steps a profiled call ran: an
// in-place cache write counts its new position only, a gather or a slice the elements it takes);
// GB_per_s, what all devices read and write per second, and fraction_of_triad against a STREAM
// triad over as many bytes, timed interleaved (8 steps back to back, then the triad): a step reads
// every weight once, so this is the bound of a decode step. A step's time and bytes against its
// cache length show what grows with the cache.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fma_peak.hpp"
#include "interleaved.hpp"
#include "llama.hpp"
#include "standalone_gemm.hpp"
#include "tessel/runtime/local_dot.hpp"
#include "tessel/tessel.hpp"
#include "tessel/tools/profile.hpp"
#include "triad.hpp"

namespace {

using namespace tessel;
constexpr std::int64_t batch = 2, prompt_len = 128;
// Calls of the model made back to back in each iteration of the interleaved loop, as the peers
// (scripts/llama_peers.py) and a generate loop make them: the weights stay as warm in the caches as
// a call leaves them, where the limits' kernels between iterations would evict them.
constexpr int back_to_back = 8;

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
void report(benchmark::State& state, ExecutionCounts const& before, ExecutionCounts const& after,
            models::KvCache<T> const& cache) {
  long collectives = 0;
  for (auto k : plan::all_collectives) collectives += after[k] - before[k];
  double bytes = 0;
  for (auto const& t : cache.kv) bytes += static_cast<double>(t.size()) * sizeof(T);
  state.counters["collectives"] = static_cast<double>(collectives);
  state.counters["cache_MiB"] = bytes / (1 << 20);
}

// The prefill's GEMMs on one device through the BLAS alone, grouped per layer as the forward
// issues them, in the model's layouts: weights (in, out), the head (vocab, hidden) read
// transposed. Per layer the q, k, v and output projections, attention's scores and p . v over the
// whole (masked) square of positions, the MLP's three; then the head over the positions whose
// logits are kept. Their flops are the model's GEMM flops the counters use. The weights are marked
// as such: the backend keeps them packed, as it keeps the model's.
template <class T>
bench::BasicStandaloneGemms<T> prefill_gemms(models::LlamaConfig const& c, bool last_only) {
  bench::BasicStandaloneGemms<T> g;
  std::int64_t const t = batch * prompt_len, e = c.hidden, d = c.head_dim, f = c.intermediate;
  std::int64_t const q = c.heads * d, kv = c.kv_heads * d, bh = batch * c.heads;
  T* x = g.buffer(t * std::max(f, e));
  T* w = g.buffer(std::max(e * f, c.vocab * e));
  T* y = g.buffer(std::max(t * f, (last_only ? batch : t) * c.vocab));
  T* scores = g.buffer(bh * prompt_len * prompt_len);
  for (std::int64_t layer = 0; layer < c.layers; ++layer) {
    g.group({{t, q, e, x, w, y, false, true}});
    g.group({{t, kv, e, x, w, y, false, true}});
    g.group({{t, kv, e, x, w, y, false, true}});
    std::vector<typename bench::BasicStandaloneGemms<T>::Gemm> qk, pv;
    for (std::int64_t h = 0; h < bh; ++h) {
      qk.push_back({prompt_len, prompt_len, d, x + h * prompt_len * d, w + h * prompt_len * d,
                    scores + h * prompt_len * prompt_len, true});
      pv.push_back({prompt_len, d, prompt_len, scores + h * prompt_len * prompt_len, w + h * prompt_len * d,
                    y + h * prompt_len * d});
    }
    g.group(qk);
    g.group(pv);
    g.group({{t, e, q, x, w, y, false, true}});
    g.group({{t, f, e, x, w, y, false, true}});
    g.group({{t, f, e, x, w, y, false, true}});
    g.group({{t, e, f, x, w, y, false, true}});
  }
  g.group({{last_only ? batch : t, c.vocab, e, x, w, y, true, true}});
  return g;
}

template <class T>
void BM_llama_prefill(benchmark::State& state) {
  auto const mesh = mesh_of(state.range(0));
  bool const last_only = state.range(1) != 0;
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
  auto const gemms = prefill_gemms<T>(model.config, last_only);
  auto peak = measure::gemm_fma(detail::blas_info().f32_vector_bits);
  peak.calibrate_like(run);
  auto const [prefill_s, peak_s, blas_s] = bench::time_interleaved_repeated(state, back_to_back, run, peak, gemms);
  report(state, before, after, cache);
  double const flops = gemms.flops(), peak_gflops = peak.flops() / peak_s / 1e9;
  state.counters["tokens_per_s"] = static_cast<double>(batch * prompt_len) / prefill_s;
  state.counters["GFLOP_per_s"] = flops / prefill_s / 1e9;
  state.counters["peak_GFLOP_per_s"] = peak_gflops;
  state.counters["fraction_of_peak"] = flops / prefill_s / 1e9 / peak_gflops;
  state.counters["blas_fraction_of_peak"] = flops / blas_s / 1e9 / peak_gflops;
  state.counters["fraction_of_blas"] = blas_s / prefill_s;
  state.SetLabel(std::string("peak: ") + peak.isa);
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
  double const all_devices = bytes * static_cast<double>(mesh.num_devices());
  measure::Triad const triad(static_cast<std::int64_t>(all_devices / (3 * sizeof(float))));
  auto const [step_s, triad_s] = bench::time_interleaved_repeated(state, back_to_back, run, triad);
  report(state, before, after, cache);
  state.counters["tokens_per_s"] = static_cast<double>(batch) / step_s;
  state.counters["attended"] = static_cast<double>(window);
  state.counters["device_MB_per_token"] = bytes / static_cast<double>(batch) / 1e6;
  state.counters["GB_per_s"] = all_devices / step_s / 1e9;
  state.counters["triad_GB_per_s"] = triad.bytes() / triad_s / 1e9;
  state.counters["fraction_of_triad"] = (all_devices / step_s) / (triad.bytes() / triad_s);
}

BENCHMARK(BM_llama_prefill<float>)
    ->Args({8, 0})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();
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
    ->UseManualTime();
BENCHMARK(BM_llama_prefill<bfloat16>)
    ->Args({8, 0})
    ->Args({1, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();
BENCHMARK(BM_llama_decode<bfloat16>)
    ->Args({8, 256, 1, 1})
    ->Args({8, 2048, 1, 1})
    ->Args({1, 256, 1, 1})
    ->Args({1, 2048, 1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseManualTime();

}  // namespace
