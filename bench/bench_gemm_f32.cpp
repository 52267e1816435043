// float32 GEMMs by oneDNN's matmul against OpenBLAS's sgemm, per shape class that tessel's models
// produce, each pair timed interleaved in one loop (bench/interleaved.hpp) with the FMA peak of
// the CPU's widest vectors (measure/fma_peak.hpp). Both go through the entry point dot_general ends
// in (detail::run_gemms, with detail::set_f32_gemm choosing the library), one call per device of
// the mesh the shapes come from, scheduled as tessel schedules them (GemmSchedule::automatic:
// GPT-2's 8 devices side by side, one single-threaded GEMM per thread; one device over all threads).
// Shapes (m x k x n; "bT": B read transposed, as the logits read the embedding table):
//  - GPT-2 small's forward (batch 8 x seq 256, 2048 rows) on one device and per device of a (2, 4)
//    ('dp', 'mp') mesh: QKV, attention's output, MLP, logits (vocabulary 50257, split 4 ways);
//  - the Megatron MLP (4096 x 1024 x 4096) unsharded and per device of (4, 2);
//  - attention per head (seq 256, head 64), 96 heads;
//  - decode-like GEMMs of 1 to 128 rows, bench_llama's LM head of 2 rows and its decode MLP's.
// B is a weight, as a model's is: oneDNN keeps it packed from its second GEMM on
// (src/runtime/backend/host/packed_operands.hpp), as it does tessel's weights; OpenBLAS packs it
// on every call. The *_activation cases read B as an activation (not kept: oneDNN packs it for
// each GEMM of more than 256 rows, gemm_f32.cpp). Counters: onednn_ and openblas_GFLOP_per_s; onednn_speedup = OpenBLAS time / oneDNN time (> 1:
// oneDNN faster); *_fraction_of_peak against peak_GFLOP_per_s (the widest FMA's, all threads,
// timed in the same loop); max_rel_diff between the two results. The run's context names the
// BLAS, its core type, threads, and what runs float32 GEMMs by default (f32_gemms: the rule of
// src/runtime/backend/host/gemm_f32.cpp).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "fma_peak.hpp"
#include "interleaved.hpp"
#include "standalone_gemm.hpp"
#include "tessel/runtime/local_dot.hpp"
#include "tessel/tessel.hpp"

namespace {

using namespace tessel;
using detail::F32Gemm;

struct Shape3 {
  std::int64_t m, k, n;
  bool b_transposed = false;
  bool b_weight = true;  // B a weight (kept packed by oneDNN), else an activation read once
};

// `devices` GEMMs of one shape, one per device, each with operands of its own, as one run_gemms
// call; results into one of two sets of outputs, so that both libraries' can be compared.
class DeviceGemms {
 public:
  DeviceGemms(Shape3 s, int devices) : s_(s), largest_(s.m * s.n * s.k) {
    for (int d = 0; d < devices; ++d) {
      float const* a = buffers_.buffer(values(s.m * s.k, 2 * d));
      float const* b = buffers_.buffer(values(s.k * s.n, 2 * d + 1));
      for (auto& calls : calls_)
        calls.push_back({a, b, buffers_.buffer(s.m * s.n), s.m, s.n, s.k, {false, s.k},
                         {s.b_transposed, s.b_transposed ? s.k : s.n}, d,
                         s.b_weight ? buffers_.weight_buffer(b) : std::weak_ptr<std::byte>()});
    }
  }
  void run(F32Gemm library, int out) const {
    detail::set_f32_gemm(library);
    detail::run_gemms(std::span<detail::GemmCall<float> const>(calls_[out]), largest_);
    Kokkos::fence();
  }
  double flops() const { return 2.0 * static_cast<double>(largest_) * static_cast<double>(calls_[0].size()); }
  // The largest difference between the two outputs, relative to the largest magnitude.
  double max_rel_diff() const {
    double diff = 0, scale = 0;
    for (std::size_t d = 0; d < calls_[0].size(); ++d) {
      auto const n = static_cast<std::size_t>(s_.m * s_.n);
      auto x = bench::StandaloneGemms::to_host(calls_[0][d].c, n), y = bench::StandaloneGemms::to_host(calls_[1][d].c, n);
      for (std::size_t i = 0; i < n; ++i) {
        diff = std::max(diff, static_cast<double>(std::abs(x[i] - y[i])));
        scale = std::max(scale, static_cast<double>(std::abs(y[i])));
      }
    }
    return diff / std::max(scale, 1e-30);
  }

 private:
  // Values in [-1, 1), different per buffer, so that a wrong element shows.
  static std::vector<float> values(std::int64_t n, int seed) {
    std::vector<float> v(static_cast<std::size_t>(n));
    std::uint32_t x = 2463534242u + 7919u * static_cast<std::uint32_t>(seed);
    for (auto& e : v) {
      x ^= x << 13, x ^= x >> 17, x ^= x << 5;
      e = static_cast<float>(x >> 8) / static_cast<float>(1 << 23) - 1.0f;
    }
    return v;
  }
  Shape3 s_;
  std::int64_t largest_;
  bench::StandaloneGemms buffers_;
  std::vector<detail::GemmCall<float>> calls_[2];
};

void BM_gemm_f32(benchmark::State& state, Shape3 s, int devices) {
  DeviceGemms gemms(s, devices);
  auto const previous = detail::f32_gemm();
  auto onednn = [&] { gemms.run(F32Gemm::onednn, 0); };
  auto openblas = [&] { gemms.run(F32Gemm::openblas, 1); };
  auto peak = measure::widest_fma();
  peak.calibrate_like(onednn);
  openblas();
  auto [onednn_s, openblas_s, peak_s] = bench::time_interleaved(state, onednn, openblas, peak);
  detail::set_f32_gemm(previous);
  double const rel = gemms.max_rel_diff(), peak_gflops = peak.flops() / peak_s / 1e9;
  state.counters["onednn_GFLOP_per_s"] = gemms.flops() / onednn_s / 1e9;
  state.counters["openblas_GFLOP_per_s"] = gemms.flops() / openblas_s / 1e9;
  state.counters["onednn_speedup"] = openblas_s / onednn_s;
  state.counters["peak_GFLOP_per_s"] = peak_gflops;
  state.counters["onednn_fraction_of_peak"] = gemms.flops() / onednn_s / 1e9 / peak_gflops;
  state.counters["openblas_fraction_of_peak"] = gemms.flops() / openblas_s / 1e9 / peak_gflops;
  state.counters["max_rel_diff"] = rel;
  // Both sum k float products per element: beyond a few float epsilons times sqrt(k) one is wrong.
  if (!(rel <= 1e-4)) state.SkipWithError("oneDNN's and OpenBLAS's results differ");
  state.SetLabel(std::to_string(devices) + " x " + std::to_string(s.m) + "x" + std::to_string(s.k) + "x" +
                 std::to_string(s.n) + (s.b_transposed ? " bT" : "") + (s.b_weight ? "" : " B activation") +
                 ", peak " + peak.isa);
}

constexpr std::int64_t vocab_shard = (50257 + 3) / 4;  // 12565 rows of the table per 'mp' device

#define GEMM_F32(name, devices, ...)                                                                              \
  BENCHMARK_CAPTURE(BM_gemm_f32, name, Shape3{__VA_ARGS__}, devices)                                              \
      ->UseManualTime()                                                                                           \
      ->Unit(benchmark::kMillisecond)                                                                             \
      ->MinTime(0.3)

// GPT-2 small, batch 8 x seq 256, on one device.
GEMM_F32(gpt2_1dev_qkv, 1, 2048, 768, 2304);
GEMM_F32(gpt2_1dev_mlp_fc, 1, 2048, 768, 3072);
GEMM_F32(gpt2_1dev_mlp_proj, 1, 2048, 3072, 768);
GEMM_F32(gpt2_1dev_logits, 1, 2048, 768, 50257, true)->MinTime(0.1);
// The same on (2, 4): rows over 'dp', heads, hidden units and vocabulary over 'mp'.
GEMM_F32(gpt2_2x4_qkv, 8, 1024, 768, 576);
GEMM_F32(gpt2_2x4_attn_out, 8, 1024, 192, 768);
GEMM_F32(gpt2_2x4_mlp_fc_proj, 8, 1024, 768, 768);
GEMM_F32(gpt2_2x4_logits, 8, 1024, 768, vocab_shard, true)->MinTime(0.1);
// Attention per head (q . k^T, p . v): 8 x 12 heads.
GEMM_F32(attention_qk, 96, 256, 64, 256, true);
GEMM_F32(attention_pv, 96, 256, 256, 64);
// The Megatron MLP's first GEMM, unsharded and per device of (4, 2).
GEMM_F32(megatron_1dev, 1, 4096, 1024, 4096);
GEMM_F32(megatron_4x2_w1, 8, 1024, 1024, 2048);
GEMM_F32(megatron_4x2_w2, 8, 1024, 2048, 1024);
// Decode-like: few rows (one token per sequence of a batch), one device and per device of (2, 4).
GEMM_F32(decode_m1_qkv, 1, 1, 768, 2304);
GEMM_F32(decode_m8_fc, 1, 8, 768, 3072);
GEMM_F32(decode_m8_proj, 1, 8, 3072, 768);
GEMM_F32(decode_2x4_m4_qkv, 8, 4, 768, 576);
GEMM_F32(rows_m32, 1, 32, 768, 2304);
GEMM_F32(rows_m64, 1, 64, 768, 2304);
GEMM_F32(rows_m128, 1, 128, 768, 2304);
GEMM_F32(rows_m256, 1, 256, 768, 2304);
GEMM_F32(rows_m512, 1, 512, 768, 2304);
GEMM_F32(rows_m1024, 1, 1024, 768, 2304);
// The same with B an activation (read once, not kept).
GEMM_F32(rows_m512_activation, 1, 512, 768, 2304, false, false);
GEMM_F32(gpt2_1dev_mlp_fc_activation, 1, 2048, 768, 3072, false, false);
GEMM_F32(gpt2_2x4_qkv_activation, 8, 1024, 768, 576, false, false);
// bench_llama's prefill on one device (2 x 128 positions): the MLP's up and down projections.
GEMM_F32(llama_prefill_up, 1, 256, 512, 1536);
GEMM_F32(llama_prefill_down, 1, 256, 1536, 512);
// bench_llama's LM head at generate's prefill (the last position of 2 sequences) and decode: 2 rows
// against the (32003, 512) table read transposed, 65.5 MB that no cache holds across a step.
GEMM_F32(llama_head_m2, 1, 2, 512, 32003, true);
// bench_llama's prefill LM head with every position's logits: 128 positions per device of (2, 4)
// against its quarter of the table, and 256 on one device.
GEMM_F32(llama_2x4_head, 8, 128, 512, 8001, true);
GEMM_F32(llama_1dev_head, 1, 256, 512, 32003, true);
// bench_llama's decode step on one device (2 rows): the MLP's up and down projections.
GEMM_F32(llama_decode_up, 1, 2, 512, 1536);
GEMM_F32(llama_decode_down, 1, 2, 1536, 512);

}  // namespace
