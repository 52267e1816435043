// Fused elementwise work against memory bandwidth, all in one run:
//  - the chain y = tanh(a * x + b) * 0.5 - x / 3 (6 ops, 3 inputs) on 2^25 float32 per input over
//    8 devices, as a fraction of a STREAM triad's bandwidth (bytes: 3 reads + 1 write), and
//    against the same chain evaluated op by op (one kernel and one temporary per op);
//  - softmax over the last axis of (8192, 4096) float32 sharded over rows, counting one read and
//    one write of the tensor, also from cache (bench/row_kernel.hpp); and fast_math::softmax (the
//    opt-in, expr/fast_math.hpp) likewise;
//  - sum(x) of (8192, 4096) float32 sharded over rows: one output per device, its rows cut into
//    runs the shape fixes (runtime/region_launch.hpp), as a fraction of the triad (bytes: one read).
//  - reductions of short rows, max(x, -1) and sum(exp(x), -1) of (16384, 128) float32 (attention's
//    rows: 2 x 128 positions x 8 heads x 128 keys), each output's row on one thread, against the
//    row kernel that writes every element, x - max(x, -1) and exp(x) - sum(exp(x), -1)
//    (fraction_of_row_kernel: that kernel's time over the reduction's; a reduction writes 128x less,
//    so below 1 the per-row set-up costs more than the row);
//  - a rotary embedding (models/llama.hpp's rotate) of (2, 128, 8, 64), float32 and bfloat16: rows
//    of 32 elements under eight leaves, against two products and a sum (a b - b a) over one long
//    row of as many elements (fraction_of_long_rows: what the short rows' set-up costs).
// Each on its 8 devices (devices:8) and on a mesh of one device (devices:1: the whole problem on
// one logical device, one GPU stream), the same shapes.
#include <benchmark/benchmark.h>

#include "interleaved.hpp"
#include "row_kernel.hpp"
#include "triad.hpp"
#include "tessel/expr/fast_math.hpp"
#include "tessel/tessel.hpp"
#include "llama.hpp"

namespace {

using namespace tessel;

using measure::Triad;

// The benchmark's mesh of state.range(0) devices: 8 on one axis 'x', or 1.
Mesh x_mesh(benchmark::State const& state) {
  return state.range(0) == 1 ? make_mesh({1}, {"x"}, {0}) : make_mesh({8}, {"x"});
}

void BM_fused_chain(benchmark::State& state) {
  constexpr std::int64_t n = std::int64_t{1} << 25;
  NamedSharding s(x_mesh(state), P("x"));
  auto a = random::normal(PRNGKey(0), {n}, s);
  auto x = random::normal(PRNGKey(1), {n}, s);
  auto b = random::normal(PRNGKey(2), {n}, s);
  Triad triad(n);
  auto fused = [&] { benchmark::DoNotOptimize(eval(tanh(a * x + b) * 0.5f - x / 3.0f)); };
  auto op_by_op = [&] {
    Tensor<float> t1 = a * x;
    Tensor<float> t2 = t1 + b;
    Tensor<float> t3 = tanh(t2);
    Tensor<float> t4 = t3 * 0.5f;
    Tensor<float> t5 = x / 3.0f;
    Tensor<float> y = t4 - t5;
    benchmark::DoNotOptimize(y);
  };
  auto [fused_s, triad_s, op_s] = bench::time_interleaved(state, fused, triad, op_by_op);
  double bytes = 4.0 * n * sizeof(float);
  state.counters["GB_per_s"] = bytes / fused_s / 1e9;
  state.counters["triad_GB_per_s"] = triad.bytes() / triad_s / 1e9;
  state.counters["fraction_of_triad"] = (bytes / fused_s) / (triad.bytes() / triad_s);
  state.counters["fused_speedup"] = op_s / fused_s;
}

template <bool Fast>
void time_softmax_rows(benchmark::State& state) {
  constexpr std::int64_t rows = 8192, cols = 4096;
  NamedSharding s(x_mesh(state), P("x", None));
  bench::time_row_kernel(state, rows, cols, [&](std::int64_t n) {
    auto x = random::normal(PRNGKey(3), {n, cols}, s);
    return [=] {
      if constexpr (Fast) benchmark::DoNotOptimize(eval(fast_math::softmax(x)));
      else benchmark::DoNotOptimize(eval(softmax(x)));
    };
  });
}

void BM_softmax_rows(benchmark::State& state) { time_softmax_rows<false>(state); }
// The opt-in fast softmax (expr/fast_math.hpp: within 7e-7 relative of JAX's values).
void BM_softmax_rows_fast(benchmark::State& state) { time_softmax_rows<true>(state); }

void BM_sum_all(benchmark::State& state) {
  constexpr std::int64_t rows = 8192, cols = 4096;
  auto x = random::normal(PRNGKey(4), {rows, cols}, NamedSharding(x_mesh(state), P("x", None)));
  Triad triad(rows * cols);
  auto total = [&] { benchmark::DoNotOptimize(eval(sum(x))); };
  auto [sum_s, triad_s] = bench::time_interleaved(state, total, triad);
  double bytes = static_cast<double>(rows * cols) * sizeof(float);
  state.counters["GB_per_s"] = bytes / sum_s / 1e9;
  state.counters["triad_GB_per_s"] = triad.bytes() / triad_s / 1e9;
  state.counters["fraction_of_triad"] = (bytes / sum_s) / (triad.bytes() / triad_s);
}

template <bool Exp>
void time_short_row_reduction(benchmark::State& state) {
  constexpr std::int64_t rows = 16384, cols = 128;
  auto x = random::normal(PRNGKey(10), {rows, cols}, NamedSharding(x_mesh(state), P("x", None)));
  auto reduction = [&] {
    if constexpr (Exp) benchmark::DoNotOptimize(eval(sum(exp(x), -1, true)));
    else benchmark::DoNotOptimize(eval(max(x, -1, true)));
  };
  auto row_kernel = [&] {
    if constexpr (Exp) benchmark::DoNotOptimize(eval(exp(x) - sum(exp(x), -1, true)));
    else benchmark::DoNotOptimize(eval(x - max(x, -1, true)));
  };
  auto [reduction_s, row_s] = bench::time_interleaved(state, reduction, row_kernel);
  state.counters["rows_per_s"] = static_cast<double>(rows) / reduction_s;
  state.counters["fraction_of_row_kernel"] = row_s / reduction_s;
}

void BM_row_max_short(benchmark::State& state) { time_short_row_reduction<false>(state); }
void BM_row_sum_exp_short(benchmark::State& state) { time_short_row_reduction<true>(state); }

template <class T>
void BM_rotary(benchmark::State& state) {
  constexpr std::int64_t batch = 2, seq = 128, heads = 8, dim = 64, n = batch * seq * heads * dim;
  NamedSharding s(x_mesh(state), state.range(0) == 1 ? P() : P(None, None, "x", None));
  NamedSharding flat(x_mesh(state), P("x"));
  Tensor<T> x = astype<T>(random::normal(PRNGKey(5), {batch, seq, heads, dim}, s));
  NamedSharding table(x_mesh(state), P());
  Tensor<T> c = astype<T>(random::normal(PRNGKey(6), {seq, 1, dim / 2}, table));
  Tensor<T> sn = astype<T>(random::normal(PRNGKey(7), {seq, 1, dim / 2}, table));
  Tensor<T> a = astype<T>(random::normal(PRNGKey(8), {n}, flat)), b = astype<T>(random::normal(PRNGKey(9), {n}, flat));
  auto rotary = [&] { benchmark::DoNotOptimize(eval(models::llama::rotate(x, c, sn))); };
  auto long_rows = [&] { benchmark::DoNotOptimize(eval(a * b - b * a)); };
  auto [rotary_s, long_s] = bench::time_interleaved(state, rotary, long_rows);
  state.counters["elements_per_s"] = static_cast<double>(n) / rotary_s;
  state.counters["fraction_of_long_rows"] = long_s / rotary_s;
}

}  // namespace

BENCHMARK_TEMPLATE(BM_rotary, float)->ArgName("devices")->Arg(8)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK_TEMPLATE(BM_rotary, bfloat16)->ArgName("devices")->Arg(8)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_fused_chain)->ArgName("devices")->Arg(8)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_softmax_rows)->ArgName("devices")->Arg(8)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_softmax_rows_fast)->ArgName("devices")->Arg(8)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);
BENCHMARK(BM_row_max_short)->ArgName("devices")->Arg(8)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_row_sum_exp_short)->ArgName("devices")->Arg(8)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(1.0);
BENCHMARK(BM_sum_all)->ArgName("devices")->Arg(8)->Arg(1)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(2.0);

