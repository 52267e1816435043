// The collectives across processes, called directly (runtime/collectives.hpp): under mpirun with
// 2 or 4 processes of 8 / N devices each (CTest does, tests/CMakeLists.txt). Every process knows
// every member's input (a formula of the member and the element), so each checks its own
// members' outputs against a host reference: copies exactly, reductions bitwise against a left
// fold in member order (the in-process order). Groups are in device order, scrambled, and
// a subset of the processes; boxes are 2-D, so that pieces are strided in the whole (MPI datatypes).
#include <catch2/catch_session.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "tessel/plan/cost_model.hpp"
#include "tessel/runtime/collectives.hpp"
#include "tessel/runtime/communicators.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using Catch::Matchers::ContainsSubstring;

namespace {

// Member k's input value at global index (r, c): exact in float, different per member.
float value(std::size_t k, std::int64_t r, std::int64_t c) {
  return static_cast<float>((static_cast<std::int64_t>(k) * 131 + r * 17 + c * 7) % 1001 - 500) / 64.0f + 0.1f;
}

std::vector<float> fill(std::size_t k, Box const& box) {
  std::vector<float> v;
  for (std::int64_t r = box[0].start; r < box[0].stop; ++r)
    for (std::int64_t c = box[1].start; c < box[1].stop; ++c) v.push_back(value(k, r, c));
  return v;
}

// Buffers for a group: each local member's input (over in_boxes[k]) and output (over out_boxes[k]).
struct Buffers {
  std::vector<std::vector<float>> in, out;
  std::vector<GroupMember> group;
  Buffers(std::vector<int> const& devices, std::vector<Box> const& in_boxes, std::vector<Box> const& out_boxes) {
    in.resize(devices.size());
    out.resize(devices.size());
    for (std::size_t k = 0; k < devices.size(); ++k) {
      GroupMember m{devices[k], nullptr, nullptr};
      if (is_local_device(devices[k])) {
        in[k] = fill(k, in_boxes[k]);
        out[k].assign(static_cast<std::size_t>(out_boxes[k].num_elements()), -1.0f);
        m.in = reinterpret_cast<std::byte const*>(in[k].data());
        m.out = reinterpret_cast<std::byte*>(out[k].data());
      }
      group.push_back(m);
    }
  }
};

// Output element (r, c) of member k, whose output holds `box`.
float at(Buffers const& b, std::size_t k, Box const& box, std::int64_t r, std::int64_t c) {
  return b.out[k][static_cast<std::size_t>((r - box[0].start) * box[1].size() + (c - box[1].start))];
}

// The groups every test runs over: every device in order, scrambled, and a subset spanning some
// processes (devices 1, 2, 3, 4: processes {0, 1} of 2, {0, 1, 2} of 4).
std::vector<std::vector<int>> groups() {
  return {{0, 1, 2, 3, 4, 5, 6, 7}, {7, 0, 5, 2, 3, 6, 1, 4}, {1, 2, 3, 4}};
}

std::string name_of(std::vector<int> const& devices) {
  std::string s;
  for (int d : devices) s += std::to_string(d) + " ";
  return s;
}

constexpr std::int64_t rows = 24, cols = 40;

// Piece k of n: a block of columns (strided in the whole).
Box columns(std::size_t k, std::size_t n) {
  auto i = static_cast<std::int64_t>(k), m = static_cast<std::int64_t>(n);
  return Box{{0, rows}, {cols * i / m, cols * (i + 1) / m}};
}
Box rows_of(std::size_t k, std::size_t n) {
  auto i = static_cast<std::int64_t>(k), m = static_cast<std::int64_t>(n);
  return Box{{rows * i / m, rows * (i + 1) / m}, {0, cols}};
}

void run_every_collective() {
  Box const whole{{0, rows}, {0, cols}};
  for (auto const& devices : groups()) {
    INFO("group " << name_of(devices));
    std::size_t const n = devices.size();
    std::vector<Box> wholes(n, whole), col(n), row(n);
    for (std::size_t k = 0; k < n; ++k) col[k] = columns(k, n), row[k] = rows_of(k, n);

    {  // all-reduce: a left fold in member order, bitwise
      Buffers b(devices, wholes, wholes);
      collectives().all_reduce(DType::float32, ReduceOp::sum, b.group, whole);
      for (std::size_t k = 0; k < n; ++k)
        if (is_local_device(devices[k]))
          for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t c = 0; c < cols; ++c) {
              float want = value(0, r, c);
              for (std::size_t j = 1; j < n; ++j) want += value(j, r, c);
              REQUIRE(std::memcmp(&want, &b.out[k][static_cast<std::size_t>(r * cols + c)], sizeof(float)) == 0);
            }
    }
    {  // reduce-scatter onto column blocks (strided pieces of the held box)
      Buffers b(devices, wholes, col);
      collectives().reduce_scatter(DType::float32, ReduceOp::sum, b.group, whole, col);
      for (std::size_t k = 0; k < n; ++k)
        if (is_local_device(devices[k]))
          for (std::int64_t r = col[k][0].start; r < col[k][0].stop; ++r)
            for (std::int64_t c = col[k][1].start; c < col[k][1].stop; ++c) {
              float want = value(0, r, c);
              for (std::size_t j = 1; j < n; ++j) want += value(j, r, c);
              float got = at(b, k, col[k], r, c);
              REQUIRE(std::memcmp(&want, &got, sizeof(float)) == 0);
            }
    }
    // All-gathers of column blocks (member j's block lands strided in every whole: boxes moved
    // one by one) and of row blocks (each process's rows are one range: MPI's all-gather).
    for (auto const* pieces : {&col, &row}) {
      Buffers b(devices, *pieces, wholes);
      collectives().all_gather(DType::float32, b.group, *pieces);
      for (std::size_t k = 0; k < n; ++k)
        if (is_local_device(devices[k]))
          for (std::size_t j = 0; j < n; ++j)
            for (std::int64_t r = (*pieces)[j][0].start; r < (*pieces)[j][0].stop; ++r)
              for (std::int64_t c = (*pieces)[j][1].start; c < (*pieces)[j][1].stop; ++c)
                REQUIRE(at(b, k, whole, r, c) == value(j, r, c));
    }
    {  // all-to-all from row blocks to column blocks
      Buffers b(devices, row, col);
      collectives().all_to_all(DType::float32, b.group, row, col);
      for (std::size_t k = 0; k < n; ++k)
        if (is_local_device(devices[k]))
          for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t c = col[k][1].start; c < col[k][1].stop; ++c) {
              std::size_t j = 0;
              while (r >= row[j][0].stop) ++j;
              REQUIRE(at(b, k, col[k], r, c) == value(j, r, c));
            }
    }
    {  // collective-permute: a shift by one member, and member 0 also to itself (no target twice)
      std::vector<PermutePair> pairs;
      for (std::size_t k = 0; k + 1 < n; ++k) pairs.push_back({static_cast<int>(k), static_cast<int>(k + 1)});
      pairs.push_back({0, 0});
      std::vector<Box> shifted(n);
      for (std::size_t k = 0; k < n; ++k) shifted[k] = k == 0 ? row[0] : row[k - 1];
      // The target's box is the source's extent, at the source's place (a plain move).
      Buffers moved(devices, row, shifted);
      collectives().collective_permute(DType::float32, moved.group, row, shifted, pairs);
      for (std::size_t k = 0; k < n; ++k)
        if (is_local_device(devices[k])) {
          std::size_t s = k == 0 ? 0 : k - 1;
          for (std::int64_t r = row[s][0].start; r < row[s][0].stop; ++r)
            for (std::int64_t c = 0; c < cols; ++c) REQUIRE(at(moved, k, row[s], r, c) == value(s, r, c));
        }
    }
  }
}

}  // namespace

TEST_CASE("collectives across processes move exactly what each output needs, and reduce in member order") {
  REQUIRE(device_count() == 8);
  run_every_collective();
}

TEST_CASE("one device of each process: MPI's own all-to-all and all-gather, equal parts or not") {
  int const n = distributed::process_count();
  std::vector<int> devices;
  for (int p = 0; p < n; ++p) devices.push_back(p * local_device_count());
  auto const members = static_cast<std::size_t>(n);
  for (bool equal : {true, false}) {
    INFO((equal ? "equal parts" : "unequal parts"));
    // Member k's column block has width w(k); member j holds row j of every block (all-to-all:
    // each part is one run of both buffers), and the row blocks of an all-gather are one range each.
    auto width = [&](std::size_t k) { return static_cast<std::int64_t>(equal ? 8 : 3 + 2 * k); };
    std::int64_t total = 0;
    std::vector<std::int64_t> start;
    for (std::size_t k = 0; k < members; ++k) start.push_back(total), total += width(k);
    std::vector<Box> in_boxes, out_boxes, row_pieces, wholes;
    for (std::size_t k = 0; k < members; ++k) {
      auto i = static_cast<std::int64_t>(k);
      in_boxes.push_back(Box{{i, i + 1}, {0, total}});
      out_boxes.push_back(Box{{0, n}, {start[k], start[k] + width(k)}});
      row_pieces.push_back(Box{{start[k], start[k] + width(k)}, {0, 5}});
      wholes.push_back(Box{{0, total}, {0, 5}});
    }
    Buffers a(devices, in_boxes, out_boxes);
    collectives().all_to_all(DType::float32, a.group, in_boxes, out_boxes);
    Buffers g(devices, row_pieces, wholes);
    collectives().all_gather(DType::float32, g.group, row_pieces);
    std::size_t const me = static_cast<std::size_t>(distributed::process_index());
    for (std::int64_t r = 0; r < n; ++r)
      for (std::int64_t c = out_boxes[me][1].start; c < out_boxes[me][1].stop; ++c)
        REQUIRE(at(a, me, out_boxes[me], r, c) == value(static_cast<std::size_t>(r), r, c));
    for (std::size_t j = 0; j < members; ++j)
      for (std::int64_t r = row_pieces[j][0].start; r < row_pieces[j][0].stop; ++r)
        for (std::int64_t c = 0; c < 5; ++c) REQUIRE(at(g, me, wholes[me], r, c) == value(j, r, c));
  }
}

TEST_CASE("communicators: one per set of processes a group spans, made once and kept") {
  run_every_collective();
  int const made = distributed::communicator_count();
  run_every_collective();
  CHECK(distributed::communicator_count() == made);  // none per call
  // The distinct sets of processes (with this one among them) the groups span.
  std::set<std::set<int>> sets;
  for (auto const& devices : groups()) {
    std::set<int> s;
    for (int d : devices) s.insert(distributed::process_of(d));
    if (s.size() > 1 && s.count(distributed::process_index())) sets.insert(s);
  }
  CHECK(made == static_cast<int>(sets.size()));
  // The planner knows where devices live: a collective whose groups span processes is priced by
  // the cost model's mpi_ entries (plan/cost_model.hpp), unless TESSEL_PRICE_PROCESSES=0 keeps
  // every plan the one process's.
  char const* price = std::getenv("TESSEL_PRICE_PROCESSES");
  bool const priced = price == nullptr || std::string(price) != "0";
  CHECK(plan::devices_per_process() == (priced ? local_device_count() : 0));
}

TEST_CASE("a bad call fails on every process before any message, naming what is wrong; the next call works") {
  Box const whole{{0, rows}, {0, cols}};
  std::vector<int> devices{0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<Box> wholes(8, whole), col(8);
  for (std::size_t k = 0; k < 8; ++k) col[k] = columns(k, 8);
  {
    Buffers b(devices, wholes, wholes);
    b.group[3].device = 11;
    CHECK_THROWS_WITH(collectives().all_reduce(DType::float32, ReduceOp::sum, b.group, whole),
                      ContainsSubstring("all_reduce: member 3 names device 11, but there are 8 devices (0..7)"));
  }
  {
    Buffers b(devices, col, wholes);
    std::vector<Box> seven(col.begin(), col.begin() + 7);
    CHECK_THROWS_WITH(collectives().all_gather(DType::float32, b.group, seven),
                      ContainsSubstring("all_gather: 7 pieces for a group of 8 members"));
    std::vector<Box> overlapping = col;
    overlapping[1] = col[0];
    CHECK_THROWS_WITH(collectives().all_gather(DType::float32, b.group, overlapping),
                      ContainsSubstring("do not tile their union"));
  }
  {
    Buffers b(devices, wholes, col);
    std::vector<Box> outside = col;
    outside[2] = Box{{0, rows}, {cols, cols + 1}};
    CHECK_THROWS_WITH(collectives().reduce_scatter(DType::float32, ReduceOp::sum, b.group, whole, outside),
                      ContainsSubstring("reduce_scatter: pieces[2] [0:24, 40:41] is not inside the reduced box"));
  }
  {
    Buffers b(devices, col, col);
    std::vector<PermutePair> twice{{0, 1}, {2, 1}};
    CHECK_THROWS_WITH(collectives().collective_permute(DType::float32, b.group, col, col, twice),
                      ContainsSubstring("member 1 is the target of two pairs"));
  }
  run_every_collective();  // nothing was left half sent
}

int main(int argc, char* argv[]) {
  tessel::ScopeGuard guard;  // under mpirun: MPI first, then Kokkos
  return Catch::Session().run(argc, argv);
}
