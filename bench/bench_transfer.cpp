// Moving 256 MB of float32 on 8 logical devices: placing host data (device_put), resharding rows
// to columns, and gathering to the host, each as a fraction of Kokkos::deep_copy of the same bytes.
#include <benchmark/benchmark.h>

#include <vector>

#include "copy_baseline.hpp"
#include "tessel/runtime/reshard.hpp"

namespace {

using namespace tessel;
constexpr std::int64_t side = 8192;  // (8192, 8192) float32 = 256 MB
constexpr std::size_t bytes = side * side * sizeof(float);

Shape shape() { return Shape{side, side}; }
Mesh mesh() { return make_mesh({8}, {"data"}); }

std::vector<float> const& host_data() {
  static std::vector<float> data = [] {
    std::vector<float> v(static_cast<std::size_t>(side * side));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i % 1000);
    return v;
  }();
  return data;
}

void BM_device_put_rows(benchmark::State& state) {
  auto const& data = host_data();
  NamedSharding rows(mesh(), P("data", None));
  bench::time_against_copy(state, bytes, [&] { benchmark::DoNotOptimize(device_put(data, shape(), rows)); });
}

void BM_device_put_columns(benchmark::State& state) {
  auto const& data = host_data();
  NamedSharding cols(mesh(), P(None, "data"));
  bench::time_against_copy(state, bytes, [&] { benchmark::DoNotOptimize(device_put(data, shape(), cols)); });
}

void BM_reshard_rows_to_columns(benchmark::State& state) {
  auto x = device_put(host_data(), shape(), NamedSharding(mesh(), P("data", None)));
  NamedSharding cols(mesh(), P(None, "data"));
  bench::time_against_copy(state, bytes, [&] { benchmark::DoNotOptimize(device_put(x, cols)); });
}

// The same reshard through the generic box-copy path (what ran before reshards became
// collectives), to compare the two in one binary.
void BM_reshard_rows_to_columns_by_copies(benchmark::State& state) {
  auto x = device_put(host_data(), shape(), NamedSharding(mesh(), P("data", None)));
  NamedSharding cols(mesh(), P(None, "data"));
  bench::time_against_copy(state, bytes,
                           [&] { benchmark::DoNotOptimize(detail::reshard_by_copies(*x.impl_ptr(), cols)); });
}

void BM_gather_rows(benchmark::State& state) {
  auto x = device_put(host_data(), shape(), NamedSharding(mesh(), P("data", None)));
  std::vector<float> out(host_data().size());
  bench::time_against_copy(state, bytes, [&] { x.copy_to_host(out); });
}

void BM_gather_columns(benchmark::State& state) {
  auto x = device_put(host_data(), shape(), NamedSharding(mesh(), P(None, "data")));
  std::vector<float> out(host_data().size());
  bench::time_against_copy(state, bytes, [&] { x.copy_to_host(out); });
}

}  // namespace

BENCHMARK(BM_device_put_rows)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_device_put_columns)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_reshard_rows_to_columns)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_reshard_rows_to_columns_by_copies)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_gather_rows)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_gather_columns)->UseManualTime()->Unit(benchmark::kMillisecond);

