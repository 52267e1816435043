// GPT-2's forward (models/gpt2.hpp): 4 blocks, n_embd 768, 12 heads, gelu_new, the real vocabulary
// 50257 (split unevenly over mp), batch 8 x sequence 256, random weights, Megatron tensor
// parallelism over 'mp' and data parallelism over 'dp' (issue 28's configuration).
//
//   BM_gpt2_f32_mesh2x4    the forward on the (2, 4) ('dp', 'mp') mesh of 8 devices
//   BM_gpt2_f32_1device    the same model on one device (the same cores)
//   BM_gpt2_bf16_mesh2x4   bfloat16 weights and activations, float32 accumulation
//   BM_gpt2_bf16_1device   the same on one device
//   BM_gpt2_sharding_cost  the 8-device and the 1-device forwards interleaved in one loop:
//                          mesh_over_1device is the ratio of their times (target <= 1.1)
//
// Counters: tokens_per_s; GFLOP_per_s of the GEMMs (2 flops per multiply-add, the causal
// attention's masked half counted, since it is computed); fraction_of_peak against the FMA peak of
// the BLAS kernels' vector width, measured interleaved in the same loop; collectives per forward.
// Each also times the forward's GEMMs alone in the same loop, on one device's memory through the
// BLAS with nothing of tessel around them (bench/standalone_gemm.hpp; for bfloat16 the 16-bit GEMM
// dot_general runs: oneDNN on AMX or AVX512-BF16 where the CPU has them): blas_GFLOP_per_s and
// blas_fraction_of_peak are the most the forward could reach here, fraction_of_blas how much of it
// it does. The FMA peak is float32's: a 16-bit GEMM on AMX can exceed it. peak_MiB_estimated and
// peak_MiB_measured: the memory analysis's peak of the device that holds most, and the runtime's
// high-water mark there; kept_MiB: the packed weight copies that device's GEMMs keep beside them
// (memory_stats' kept_operand_bytes: on hosts whose GEMMs go to oneDNN, each weight a second time).
// scripts/gpt2_jax.py runs the same forward in JAX on 8 CPU devices side by side with this binary
// (or, with --platform gpu, on one GPU beside the 1-device benchmarks: scripts/gpu_check.sh).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "fma_peak.hpp"
#include "gpt2.hpp"
#include "interleaved.hpp"
#include "standalone_gemm.hpp"
#include "tessel/runtime/local_dot.hpp"
#include "tessel/tessel.hpp"

namespace {

using namespace tessel;
constexpr std::int64_t batch = 8, seq = 256;

models::Gpt2Config config() {
  models::Gpt2Config c;
  c.vocab = 50257;
  c.positions = 1024;
  c.embd = 768;
  c.heads = 12;
  c.layers = 4;
  return c;
}

Tensor<std::int32_t> token_ids(std::int64_t vocab) {
  std::mt19937 rng(0);
  std::vector<std::int32_t> ids(static_cast<std::size_t>(batch * seq));
  for (auto& id : ids) id = static_cast<std::int32_t>(rng() % static_cast<std::uint32_t>(vocab));
  return device_put(ids, Shape{batch, seq});
}

// The 1-device forward's GEMMs, each as one BLAS call (a batch of per-(batch, head) calls for the
// attention's two), grouped per layer as the forward issues them, on constant operands of type T.
template <class T>
bench::BasicStandaloneGemms<T> forward_gemms(models::Gpt2Config const& c) {
  bench::BasicStandaloneGemms<T> g;
  std::int64_t const t = batch * seq, e = c.embd, hd = c.embd / c.heads, bh = batch * c.heads;
  T* x = g.buffer(t * 4 * e);
  T* w = g.buffer(std::max<std::int64_t>(4 * e * e, c.vocab * e));
  T* p = g.buffer(bh * seq * seq);
  T* y = g.buffer(std::max<std::int64_t>(t * 4 * e, t * c.vocab));
  T* scores = g.buffer(bh * seq * seq);
  for (std::int64_t layer = 0; layer < c.layers; ++layer) {
    g.group({{t, e, e, x, w, y, false, true},
             {t, e, e, x, w, y + t * e, false, true},
             {t, e, e, x, w, y + 2 * t * e, false, true}});  // q, k, v
    std::vector<typename bench::BasicStandaloneGemms<T>::Gemm> qk, pv;
    for (std::int64_t h = 0; h < bh; ++h) {
      qk.push_back({seq, seq, hd, x + h * seq * hd, w + h * seq * hd, scores + h * seq * seq, true});
      pv.push_back({seq, hd, seq, p + h * seq * seq, x + h * seq * hd, y + h * seq * hd});
    }
    g.group(qk);
    g.group(pv);
    g.group({{t, e, e, x, w, y, false, true}});      // the attention's output projection
    g.group({{t, 4 * e, e, x, w, y, false, true}});  // the MLP
    g.group({{t, e, 4 * e, x, w, y, false, true}});
  }
  g.group({{t, c.vocab, e, x, w, y, true, true}});  // the logits, against the embedding (vocab x embd)
  return g;
}

Mesh mesh_of(std::int64_t devices) {
  return devices == 1 ? make_mesh({1, 1}, {"dp", "mp"}, {0}) : make_mesh({2, 4}, {"dp", "mp"});
}

template <class T>
void BM_gpt2(benchmark::State& state, std::int64_t devices) {
  auto const c = config();
  auto const model = models::random_gpt2<T>(c, mesh_of(devices));
  auto const ids = token_ids(c.vocab);
  auto const jitted = models::jit_forward(model);
  auto forward = [&] { jitted(ids).block_until_ready(); };
  forward();  // plans every block and records the forward
  // The memory analysis's peak per device against the runtime's high-water mark of one call
  // (nothing else is live yet: the weights and the tokens are the program's arguments).
  auto const memory = jitted.memory_analysis(ids);
  reset_peak_memory_stats();
  ExecutionCounts const before = execution_counts();
  forward();
  ExecutionCounts const after = execution_counts();
  DeviceMemoryStats const measured = memory_stats(memory.device);
  long collectives = 0;
  for (auto k : plan::all_collectives) collectives += after[k] - before[k];
  auto peak = measure::gemm_fma(detail::blas_info().f32_vector_bits);
  peak.calibrate_like(forward);
  auto const gemms = forward_gemms<T>(c);
  gemms();
  auto const [forward_s, peak_s, blas_s] = bench::time_interleaved(state, forward, peak, gemms);
  double const peak_gflops = peak.flops() / peak_s / 1e9;
  double const gflops = gemms.flops() / forward_s / 1e9;
  state.counters["blas_fraction_of_peak"] = gemms.flops() / blas_s / 1e9 / peak_gflops;
  state.counters["blas_GFLOP_per_s"] = gemms.flops() / blas_s / 1e9;
  state.counters["fraction_of_blas"] = blas_s / forward_s;
  state.counters["tokens_per_s"] = batch * seq / forward_s;
  state.counters["GFLOP_per_s"] = gflops;
  state.counters["peak_GFLOP_per_s"] = peak_gflops;
  state.counters["fraction_of_peak"] = gflops / peak_gflops;
  state.counters["collectives"] = static_cast<double>(collectives);
  state.counters["peak_MiB_estimated"] = static_cast<double>(memory.peak_bytes) / (1 << 20);
  state.counters["peak_MiB_measured"] = static_cast<double>(measured.peak_bytes_in_use) / (1 << 20);
  state.counters["kept_MiB"] = static_cast<double>(measured.kept_operand_bytes) / (1 << 20);
  state.SetLabel(std::string("peak: ") + peak.isa);
}

void BM_gpt2_f32_mesh2x4(benchmark::State& state) { BM_gpt2<float>(state, 8); }
void BM_gpt2_f32_1device(benchmark::State& state) { BM_gpt2<float>(state, 1); }
void BM_gpt2_bf16_mesh2x4(benchmark::State& state) { BM_gpt2<bfloat16>(state, 8); }
void BM_gpt2_bf16_1device(benchmark::State& state) { BM_gpt2<bfloat16>(state, 1); }

void BM_gpt2_sharding_cost(benchmark::State& state) {
  auto const c = config();
  auto const sharded = models::random_gpt2<float>(c, mesh_of(8));
  auto const single = models::random_gpt2<float>(c, mesh_of(1));
  auto const ids = token_ids(c.vocab);
  auto const forward_mesh = models::jit_forward(sharded), forward_one = models::jit_forward(single);
  auto on_mesh = [&] { forward_mesh(ids).block_until_ready(); };
  auto on_one = [&] { forward_one(ids).block_until_ready(); };
  on_mesh();
  on_one();
  auto [mesh_s, one_s] = bench::time_interleaved(state, on_mesh, on_one);
  state.counters["mesh_ms"] = mesh_s * 1e3;
  state.counters["one_device_ms"] = one_s * 1e3;
  state.counters["mesh_over_1device"] = mesh_s / one_s;
}

}  // namespace

BENCHMARK(BM_gpt2_f32_mesh2x4)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(5.0);
BENCHMARK(BM_gpt2_f32_1device)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(5.0);
BENCHMARK(BM_gpt2_bf16_mesh2x4)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(5.0);
BENCHMARK(BM_gpt2_bf16_1device)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(5.0);
BENCHMARK(BM_gpt2_sharding_cost)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(8.0);
