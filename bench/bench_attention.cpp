// Causal self-attention on 8 logical devices: q, k, v of (batch 8, sequence 1024, heads 16,
// head dim 64) float32 on P('dp', None, 'mp', None) over a (2, 4) dp x mp mesh (heads split
// over mp, batch over dp):
//   scores = q . k^T / sqrt(64)   (dot_general, batch dims b and h, contracting the head dim)
//   p      = softmax(where(query >= key, scores, -inf))   (the causal mask from iota, fused)
//   out    = p . v
// No collective: every device holds whole heads. Counters: GFLOP_per_s (the two GEMMs' 4 B H S^2 D
// flops, the masked half included, as XLA's cost analysis counts them), fraction_of_peak against
// the FMA peak of the BLAS kernels' vector width measured interleaved in the same loop
// (measure/fma_peak.hpp), and GB_per_s of the softmax's read and write of the scores.
#include <benchmark/benchmark.h>

#include <string>

#include "attention_layers.hpp"
#include "fma_peak.hpp"
#include "interleaved.hpp"
#include "tessel/runtime/local_dot.hpp"
#include "tessel/tessel.hpp"

namespace {

using namespace tessel;
constexpr std::int64_t batch = 8, seq = 1024, heads = 16, head_dim = 64;

void BM_causal_attention(benchmark::State& state) {
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  NamedSharding s(mesh, P("dp", None, "mp", None));
  Shape shape{batch, seq, heads, head_dim};
  auto q = random::normal(PRNGKey(0), shape, s);
  auto k = random::normal(PRNGKey(1), shape, s);
  auto v = random::normal(PRNGKey(2), shape, s);
  auto attention = measure::causal_attention();
  auto call = [&] { benchmark::DoNotOptimize(attention(q, k, v)); };
  auto peak = measure::gemm_fma(detail::blas_info().f32_vector_bits);
  peak.calibrate_like(call);
  auto [attention_s, peak_s] = bench::time_interleaved(state, call, peak);
  double const flops = 4.0 * batch * heads * seq * seq * head_dim;
  double const peak_gflops = peak.flops() / peak_s / 1e9;
  state.counters["GFLOP_per_s"] = flops / attention_s / 1e9;
  state.counters["peak_GFLOP_per_s"] = peak_gflops;
  state.counters["fraction_of_peak"] = flops / attention_s / 1e9 / peak_gflops;
  state.counters["collectives"] = static_cast<double>(attention.plan(q, k, v).count(plan::StepKind::collective));
  state.SetLabel(std::string("peak: ") + peak.isa);
}

}  // namespace

BENCHMARK(BM_causal_attention)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(3.0);
