// One transformer layer (pre-norm, as GPT-2) on 8 logical devices over a (2, 4) dp x mp mesh:
// x of (batch 4, sequence 1024, model 1024) float32 on P('dp', None, None), 16 heads of 64 split
// over mp (Megatron: Q, K, V column-parallel, the output projection and the MLP's second GEMM
// row-parallel, each followed by an all-reduce over mp), MLP hidden 4096:
//   h  = layer_norm(x);  q, k, v = h . Wq, Wk, Wv  (model -> heads x head_dim)
//   a  = softmax(causal_mask(q . k^T / 8)) . v;    x1 = x + a . Wo
//   h2 = layer_norm(x1); out = x1 + gelu(h2 . W1) . W2
// Counters: ms per layer (the benchmark's time), GFLOP_per_s of the GEMMs (2 flops per multiply-add,
// the attention's masked half included), fraction_of_peak against the FMA peak of the BLAS kernels'
// vector width measured interleaved in the same loop, and, from tessel::profile of one more layer,
// the time its collectives and reshards take (collective_ms, collective_fraction) and their count.
// blas_ms: the layer's GEMMs alone, unsharded, by the backend's BLAS (OpenBLAS from the main thread
// on hosts, cuBLAS on CUDA; bench/standalone_gemm.hpp), timed in the same loop: what the BLAS
// reaches on these shapes on this machine (blas_fraction_of_peak), and fraction_of_blas = blas_ms
// / layer ms (1.0: the layer costs no more than its GEMMs would alone).
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <vector>

#include "attention_layers.hpp"
#include "fma_peak.hpp"
#include "interleaved.hpp"
#include "standalone_gemm.hpp"
#include "tessel/runtime/local_dot.hpp"
#include "tessel/tessel.hpp"
#include "tessel/tools/profile.hpp"

namespace {

using namespace tessel;
constexpr std::int64_t batch = 4, seq = 1024, model = 1024, heads = 16, head_dim = 64, hidden = 4096;

// The layer's GEMMs on one device by the backend's BLAS alone, each operand contiguous: Q, K, V and
// the output projection (tokens x model x model), the scores and p . v per (batch, head) (seq x seq x
// head_dim, seq x head_dim x seq; each set issued as one batch), the MLP's two (tokens x model x
// hidden).
bench::StandaloneGemms unsharded_gemms() {
  constexpr std::int64_t tokens = batch * seq, pairs = batch * heads, bh = seq * head_dim;
  bench::StandaloneGemms g;
  float *x = g.buffer(tokens * model), *w = g.buffer(model * model), *q = g.buffer(tokens * model),
        *k = g.buffer(tokens * model), *scores = g.buffer(pairs * seq * seq), *w1 = g.buffer(model * hidden),
        *h = g.buffer(tokens * hidden), *w2 = g.buffer(hidden * model), *y = g.buffer(tokens * model);
  for (float* out : {q, k, y, y}) g.group({{tokens, model, model, x, w, out, false, true}});
  std::vector<bench::StandaloneGemms::Gemm> s, pv;
  for (std::int64_t p = 0; p < pairs; ++p) {
    s.push_back({seq, seq, head_dim, q + p * bh, k + p * bh, scores + p * seq * seq, true});
    pv.push_back({seq, head_dim, seq, scores + p * seq * seq, k + p * bh, y + p * bh});
  }
  g.group(s);
  g.group(pv);
  g.group({{tokens, hidden, model, x, w1, h, false, true}});
  g.group({{tokens, model, hidden, h, w2, y, false, true}});
  return g;
}

// Microseconds of a profile's instructions that move data between devices.
double communication_us(Profile const& p) {
  double us = 0;
  for (auto const& row : p.rows)
    if (row.kind != "gemm" && row.kind != "fused" && row.kind != "reduce" && row.kind != "kernel") us += row.measured_us;
  return us;
}

void BM_transformer_layer(benchmark::State& state) {
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  auto on = [&](auto... spec) { return NamedSharding(mesh, P(spec...)); };
  auto weight = [&](std::uint32_t seed, Shape const& shape, NamedSharding const& s) {
    return random::normal(PRNGKey(seed), shape, s) * (1.0f / std::sqrt(static_cast<float>(shape[0])));
  };
  auto x = random::normal(PRNGKey(0), {batch, seq, model}, on("dp", None, None));
  Tensor<float> g1 = random::uniform(PRNGKey(1), {model}, on(), 0.5f, 1.5f), b1 = random::normal(PRNGKey(2), {model}, on());
  Tensor<float> g2 = random::uniform(PRNGKey(3), {model}, on(), 0.5f, 1.5f), b2 = random::normal(PRNGKey(4), {model}, on());
  Tensor<float> wq = weight(5, {model, heads, head_dim}, on(None, "mp", None));
  Tensor<float> wk = weight(6, {model, heads, head_dim}, on(None, "mp", None));
  Tensor<float> wv = weight(7, {model, heads, head_dim}, on(None, "mp", None));
  Tensor<float> wo = weight(8, {heads, head_dim, model}, on("mp", None, None));
  Tensor<float> w1 = weight(9, {model, hidden}, on(None, "mp"));
  Tensor<float> w2 = weight(10, {hidden, model}, on("mp", None));
  auto attention = measure::attention_half();
  auto mlp = measure::mlp_half();
  auto call = [&] {
    Tensor<float> x1 = attention(x, g1, b1, wq, wk, wv, wo);
    benchmark::DoNotOptimize(mlp(x1, g2, b2, w1, w2));
  };
  auto peak = measure::gemm_fma(detail::blas_info().f32_vector_bits);
  peak.calibrate_like(call);
  bench::StandaloneGemms const blas = unsharded_gemms();
  auto [layer_s, peak_s, blas_s] = bench::time_interleaved(state, call, peak, blas);
  double const tokens = batch * seq;
  double const flops = 2.0 * tokens * model * heads * head_dim * 4    // Q, K, V, output projection
                       + 4.0 * batch * heads * seq * seq * head_dim   // scores and p . v
                       + 2.0 * 2.0 * tokens * model * hidden;         // the MLP
  double const peak_gflops = peak.flops() / peak_s / 1e9;
  state.counters["GFLOP_per_s"] = flops / layer_s / 1e9;
  state.counters["peak_GFLOP_per_s"] = peak_gflops;
  state.counters["fraction_of_peak"] = flops / layer_s / 1e9 / peak_gflops;
  state.counters["blas_ms"] = blas_s * 1e3;
  state.counters["blas_fraction_of_peak"] = flops / blas_s / 1e9 / peak_gflops;
  state.counters["fraction_of_blas"] = blas_s / layer_s;
  // The collectives one layer runs, then the layer profiled: the time its collectives and
  // reshards take.
  ExecutionCounts const before = execution_counts();
  call();
  ExecutionCounts const after = execution_counts();
  long collectives = 0;
  for (auto c : plan::all_collectives) collectives += after[c] - before[c];
  Profile first = profile(attention, x, g1, b1, wq, wk, wv, wo);
  Tensor<float> x1 = attention(x, g1, b1, wq, wk, wv, wo);
  Profile second = profile(mlp, x1, g2, b2, w1, w2);
  double const comm_ms = (communication_us(first) + communication_us(second)) / 1e3;
  double const profiled_ms = (first.measured_us() + second.measured_us()) / 1e3;
  state.counters["collectives"] = static_cast<double>(collectives);
  state.counters["collective_ms"] = comm_ms;
  state.counters["collective_fraction"] = comm_ms / profiled_ms;
  state.SetLabel(std::string("peak: ") + peak.isa);
}

}  // namespace

BENCHMARK(BM_transformer_layer)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(3.0);
