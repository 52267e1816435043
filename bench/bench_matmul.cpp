// The Megatron MLP block relu(x @ W1) @ W2 (batch 4096, model 1024, hidden 4096, float32) on 8
// logical devices, x on P('dp', None), W1 on P(None, 'mp'), W2 on P('mp', None) over a (4, 2) mesh,
// against the same two GEMMs done unsharded by one OpenBLAS call each, interleaved in one run.
// Counter fraction_of_blas = unsharded time / tessel time (1.0 = no overhead from sharding).
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <vector>

#include "interleaved.hpp"
#include "tessel/tessel.hpp"

namespace {

using namespace tessel;
constexpr int batch = 4096, model = 1024, hidden = 4096;

void BM_megatron_mlp(benchmark::State& state) {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  auto x = random::normal(PRNGKey(0), {batch, model}, NamedSharding(mesh, P("dp", None)));
  auto w1 = random::normal(PRNGKey(1), {model, hidden}, NamedSharding(mesh, P(None, "mp")));
  auto w2 = random::normal(PRNGKey(2), {hidden, model}, NamedSharding(mesh, P("mp", None)));
  auto mlp = jit([](auto const& x, auto const& w1, auto const& w2) { return matmul(relu(x.matmul(w1)), w2); });

  std::vector<float> hx = x.to_host(), hw1 = w1.to_host(), hw2 = w2.to_host();
  std::vector<float> hh(static_cast<std::size_t>(batch) * hidden), hy(static_cast<std::size_t>(batch) * model);
  auto unsharded = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch, hidden, model, 1.0f, hx.data(), model, hw1.data(),
                hidden, 0.0f, hh.data(), hidden);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, batch, model, hidden, 1.0f, hh.data(), hidden, hw2.data(),
                model, 0.0f, hy.data(), model);
  };
  auto sharded = [&] { benchmark::DoNotOptimize(mlp(x, w1, w2)); };
  auto [tessel_s, blas_s] = bench::time_interleaved(state, sharded, unsharded);
  double flops = 2.0 * 2.0 * batch * model * hidden;
  state.counters["fraction_of_blas"] = blas_s / tessel_s;
  state.counters["GFLOP_per_s"] = flops / tessel_s / 1e9;
  state.counters["blas_GFLOP_per_s"] = flops / blas_s / 1e9;
}

}  // namespace

BENCHMARK(BM_megatron_mlp)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(3.0);

