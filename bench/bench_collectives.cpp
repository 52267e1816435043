// The in-process collectives on one group of 8 logical devices (mesh ('x': 8), float32), each as a
// fraction of Kokkos::deep_copy of the same bytes, measured interleaved in the same run.
//
// Sizes, per device (MB = 2^20 bytes):
//   all_gather          in  8 MB (a row block)           out 64 MB (the gathered (2048, 8192) tensor)
//   reduce_scatter      in 64 MB (the whole partial sum)  out  8 MB (its row block of the result)
//   all_reduce          in 64 MB                          out 64 MB
//   all_reduce_bf16     in 64 MB of bfloat16 (twice the elements), combined in float32, out 64 MB
//   all_to_all          in 64 MB (rows of (16384, 8192))  out 64 MB (columns of it)
//   collective_permute  in 64 MB                          out 64 MB (ring shift: member k -> k + 1)
//
// Bytes a collective moves (the `bytes` each is compared against): the least memory traffic any
// implementation has, read every input byte once and write every output byte once, stated as the
// deep_copy with that traffic (a copy of B bytes reads B and writes B):
//   bytes = (sum of the members' in buffers + sum of their out buffers) / 2
//   all_gather (64 MB + 512 MB) / 2 = 288 MB      reduce_scatter (512 MB + 64 MB) / 2 = 288 MB
//   all_reduce, all_to_all, collective_permute (512 MB + 512 MB) / 2 = 512 MB
// So fraction_of_copy = 1 means the collective moves its data at deep_copy's bandwidth, and an
// implementation that reads inputs more than once (a naive all_reduce reads each input 8 times)
// shows up as a low fraction. On a host, writes cost more than reads (write-allocate), so the
// write-heavy all_gather tops out below 1 by that alone.
#include <benchmark/benchmark.h>

#include <vector>

#include "copy_baseline.hpp"
#include "tessel/runtime/collectives.hpp"
#include "tessel/core/device_groups.hpp"
#include "tessel/core/half.hpp"

namespace {

using namespace tessel;
constexpr int n = 8;
constexpr std::int64_t mb = std::int64_t{1} << 20;
constexpr std::int64_t per_device = 64 * mb / 4;  // float32 elements in 64 MB

using Buffer = Kokkos::View<float*, MemSpace>;

Buffer buffer(std::int64_t elements, float value) {
  Buffer b(Kokkos::view_alloc(Kokkos::WithoutInitializing, "buffer"), static_cast<std::size_t>(elements));
  Kokkos::deep_copy(b, value);  // touches every page before timing
  return b;
}

// Members 0..7 on devices 0..7 (the one group of mesh ('x': 8) over axis x), with buffers.
struct Group {
  std::vector<Buffer> ins, outs;
  std::vector<GroupMember> members;
  Group(std::int64_t in_elements, std::int64_t out_elements) {
    auto mesh = make_mesh({n}, {"x"});
    auto positions = device_groups(mesh.axes(), {0})[0];
    for (int k = 0; k < n; ++k) {
      ins.push_back(buffer(in_elements, static_cast<float>(k)));
      outs.push_back(buffer(out_elements, 0.0f));
      members.push_back({mesh.device_id(positions[static_cast<std::size_t>(k)]),
                         reinterpret_cast<std::byte const*>(ins.back().data()),
                         reinterpret_cast<std::byte*>(outs.back().data())});
    }
  }
};

std::size_t copy_bytes(std::int64_t in_elements, std::int64_t out_elements) {
  return static_cast<std::size_t>((in_elements + out_elements) * n * 4 / 2);
}

// Row block k of 8 of `box`.
Box rows(Box box, int k) {
  std::int64_t r = box[0].size() / n;
  box[0] = {box[0].start + r * k, box[0].start + r * (k + 1)};
  return box;
}

void BM_all_gather(benchmark::State& state) {
  Box whole{{0, 2048}, {0, 8192}};  // 64 MB float32
  std::vector<Box> pieces;
  for (int k = 0; k < n; ++k) pieces.push_back(rows(whole, k));
  Group g(per_device / n, per_device);
  bench::time_against_copy(state, copy_bytes(per_device / n, per_device),
                           [&] { in_process_collectives().all_gather(DType::float32, g.members, pieces); });
}

void BM_reduce_scatter(benchmark::State& state) {
  Box held{{0, 2048}, {0, 8192}};
  std::vector<Box> pieces;
  for (int k = 0; k < n; ++k) pieces.push_back(rows(held, k));
  Group g(per_device, per_device / n);
  bench::time_against_copy(state, copy_bytes(per_device, per_device / n), [&] {
    in_process_collectives().reduce_scatter(DType::float32, ReduceOp::sum, g.members, held, pieces);
  });
}

void BM_all_reduce(benchmark::State& state) {
  Box held{{0, 2048}, {0, 8192}};
  Group g(per_device, per_device);
  bench::time_against_copy(state, copy_bytes(per_device, per_device), [&] {
    in_process_collectives().all_reduce(DType::float32, ReduceOp::sum, g.members, held);
  });
}

// The same 64 MB per device as bfloat16: twice the elements, each member's value converted to
// float32, combined in member order and rounded once.
void BM_all_reduce_bf16(benchmark::State& state) {
  Box held{{0, 4096}, {0, 8192}};
  Group g(per_device, per_device);  // float32 buffers of 64 MB, read as bfloat16 pairs
  for (int k = 0; k < n; ++k) {
    Kokkos::View<std::uint16_t*, MemSpace> in(reinterpret_cast<std::uint16_t*>(g.ins[static_cast<std::size_t>(k)].data()),
                                              static_cast<std::size_t>(2 * per_device));
    Kokkos::deep_copy(in, bfloat16(static_cast<float>(k)).bits);
  }
  bench::time_against_copy(state, copy_bytes(per_device, per_device), [&] {
    in_process_collectives().all_reduce(DType::bfloat16, ReduceOp::sum, g.members, held);
  });
}

void BM_all_to_all(benchmark::State& state) {
  // (16384, 8192) float32 = 512 MB: rows in, columns out; each member sends a (2048, 1024) block
  // (runs of 4 KB) to every member.
  Box whole{{0, 16384}, {0, 8192}};
  std::vector<Box> in_boxes, out_boxes;
  for (int k = 0; k < n; ++k) {
    in_boxes.push_back(rows(whole, k));
    out_boxes.push_back(Box{{0, 16384}, {1024 * k, 1024 * (k + 1)}});
  }
  Group g(per_device, per_device);
  bench::time_against_copy(state, copy_bytes(per_device, per_device), [&] {
    in_process_collectives().all_to_all(DType::float32, g.members, in_boxes, out_boxes);
  });
}

void BM_collective_permute(benchmark::State& state) {
  Box whole{{0, 16384}, {0, 8192}};
  std::vector<Box> in_boxes, out_boxes;
  std::vector<PermutePair> pairs;
  for (int k = 0; k < n; ++k) {
    in_boxes.push_back(rows(whole, k));
    out_boxes.push_back(rows(whole, (k + n - 1) % n));  // member k receives member k - 1's rows
    pairs.push_back({k, (k + 1) % n});
  }
  Group g(per_device, per_device);
  bench::time_against_copy(state, copy_bytes(per_device, per_device), [&] {
    in_process_collectives().collective_permute(DType::float32, g.members, in_boxes, out_boxes, pairs);
  });
}

}  // namespace

BENCHMARK(BM_all_gather)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_reduce_scatter)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_all_reduce)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_all_reduce_bf16)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_all_to_all)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_collective_permute)->UseManualTime()->Unit(benchmark::kMillisecond);

// main: bench/main.cpp (ScopeGuard, then set_device_count(8)).
