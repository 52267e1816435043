// The in-process collectives and the device groups they run in, against plain host references, on
// every test mesh and every subset of its axes (in every order), with data whose every element is
// distinct (so a misplaced element cannot go unnoticed).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <set>
#include <vector>

#include "support/data.hpp"
#include "support/meshes.hpp"
#include "tessel/runtime/collectives.hpp"
#include "tessel/core/device_groups.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace tessel;

namespace {

std::string axes_string(MeshAxes const& mesh, std::vector<int> const& axes) {
  std::string s = "(";
  for (std::size_t i = 0; i < axes.size(); ++i)
    s += (i ? ", " : "") + mesh.name(static_cast<std::size_t>(axes[i])).str();
  return s + ")";
}

// A device buffer with host copies in and out.
// A buffer the host fills and reads: collectives are ordered on the devices' queues, so the host
// fences them first (runtime/stream.hpp), and before the memory goes.
struct Buffer {
  Kokkos::View<std::byte*, MemSpace> view;
  explicit Buffer(std::size_t bytes) : view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "buffer"), bytes) {}
  Buffer(Buffer const&) = default;
  Buffer(Buffer&&) = default;
  Buffer& operator=(Buffer const&) = default;
  Buffer& operator=(Buffer&&) = default;
  ~Buffer() {
    if (view.use_count() == 1 && Kokkos::is_initialized()) fence_all_devices();
  }
  [[nodiscard]] std::byte* data() const { return view.data(); }
  template <class T>
  void fill(std::vector<T> const& v) const {
    fence_all_devices();
    Kokkos::View<std::byte*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(
        reinterpret_cast<std::byte*>(const_cast<T*>(v.data())), v.size() * sizeof(T));
    Kokkos::deep_copy(Kokkos::subview(view, std::pair<std::size_t, std::size_t>(0, h.size())), h);
  }
  template <class T>
  std::vector<T> read(std::int64_t count) const {
    fence_all_devices();
    std::vector<T> v(static_cast<std::size_t>(count));
    Kokkos::View<std::byte*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(
        reinterpret_cast<std::byte*>(v.data()), v.size() * sizeof(T));
    Kokkos::deep_copy(h, Kokkos::subview(view, std::pair<std::size_t, std::size_t>(0, h.size())));
    return v;
  }
};

// A value for global index `flat` held by member k: distinct over both, exact in every dtype.
template <class T>
T value(std::int64_t flat, std::size_t member) {
  return static_cast<T>(flat * 64 + static_cast<std::int64_t>(member) + 1);
}
// A member's input data over `box` of a tensor of shape `shape`; `per_member` makes it differ between
// members (inputs of reductions), otherwise it is the global tensor's (inputs of data movement).
template <class T>
std::vector<T> box_data(Shape const& shape, Box const& box, std::size_t member, bool per_member) {
  std::vector<T> v(static_cast<std::size_t>(box.num_elements()));
  for (std::int64_t i = 0; i < box.num_elements(); ++i) {
    std::int64_t flat = 0, stride = 1, rest = i;
    for (std::size_t d = box.size(); d-- > 0;) {
      flat += (box[d].start + rest % box[d].size()) * stride;
      rest /= box[d].size();
      stride *= shape[d];
    }
    v[static_cast<std::size_t>(i)] = value<T>(flat, per_member ? member : 0);
  }
  return v;
}

// Host reference: the part `region` of `src` (holding src_box) laid out over dst_box into dst.
template <class T>
void host_copy(std::vector<T> const& src, Box const& src_box, std::vector<T>& dst, Box const& dst_box,
               Box const& region) {
  if (region.empty()) return;
  for (std::int64_t i = 0; i < region.num_elements(); ++i) {
    std::int64_t s = 0, d = 0, s_stride = 1, d_stride = 1, rest = i;
    for (std::size_t k = region.size(); k-- > 0;) {
      std::int64_t index = region[k].start + rest % region[k].size();
      rest /= region[k].size();
      s += (index - src_box[k].start) * s_stride;
      d += (index - dst_box[k].start) * d_stride;
      s_stride *= src_box[k].size();
      d_stride *= dst_box[k].size();
    }
    dst[static_cast<std::size_t>(d)] = src[static_cast<std::size_t>(s)];
  }
}

// The box of shard `k` of `parts` along dimension `dim` of `box`.
Box split(Box box, std::size_t dim, std::size_t k, std::size_t parts) {
  std::int64_t size = box[dim].size() / static_cast<std::int64_t>(parts);
  box[dim] = {box[dim].start + size * static_cast<std::int64_t>(k), box[dim].start + size * static_cast<std::int64_t>(k + 1)};
  return box;
}

template <class T>
T reduce_ref(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::sum: return a + b;
    case ReduceOp::prod: return a * b;
    case ReduceOp::max: return std::max(a, b);
    case ReduceOp::min: return std::min(a, b);
  }
  return a;
}

// Runs `f(mesh, axes, groups)` for every test mesh and every ordered subset of its axes, with the
// groups of mesh positions device_groups forms.
template <class F>
void for_every_group_layout(F&& f) {
  for (auto const& mesh : test::all_meshes()) {
    for (auto const& axes : test::ordered_axis_subsets(mesh.axes())) {
      INFO(to_string(mesh) << " over axes " << axes_string(mesh.axes(), axes));
      f(mesh, axes, device_groups(mesh.axes(), axes));
    }
  }
}

// Members of one group of `mesh` at positions `positions`, with input and output buffers of the given
// element counts.
struct Group {
  std::vector<Buffer> ins, outs;
  std::vector<GroupMember> members;
  Group(Mesh const& mesh, std::vector<int> const& positions, std::vector<std::int64_t> const& in_elements,
        std::vector<std::int64_t> const& out_elements, std::size_t element_size) {
    for (std::size_t k = 0; k < positions.size(); ++k) {
      ins.emplace_back(std::max<std::size_t>(1, static_cast<std::size_t>(in_elements[k]) * element_size));
      outs.emplace_back(std::max<std::size_t>(1, static_cast<std::size_t>(out_elements[k]) * element_size));
    }
    for (std::size_t k = 0; k < positions.size(); ++k)
      members.push_back({mesh.device_id(positions[k]), ins[k].data(), outs[k].data()});
  }
};

}  // namespace

// ---- device groups ----

TEST_CASE("device groups: members differ only on the given axes, numbered mixed-radix in their order",
          "[runtime][collectives]") {
  for_every_group_layout([](Mesh const& mesh, std::vector<int> const& axes, auto const& groups) {
    MeshAxes const& m = mesh.axes();
    int group_size = 1;
    for (int a : axes) group_size *= m.size(static_cast<std::size_t>(a));
    REQUIRE(static_cast<int>(groups.size()) * group_size == m.num_devices());
    std::set<int> seen;
    int previous_first = -1;
    for (auto const& g : groups) {
      REQUIRE(static_cast<int>(g.size()) == group_size);
      CHECK(g[0] > previous_first);  // groups are listed in order of their first member
      previous_first = g[0];
      auto c0 = m.coords(g[0]);
      for (std::size_t k = 0; k < g.size(); ++k) {
        REQUIRE(seen.insert(g[k]).second);
        auto c = m.coords(g[k]);
        // Same coordinates off the group's axes.
        for (std::size_t a = 0; a < m.num_axes(); ++a)
          if (std::find(axes.begin(), axes.end(), static_cast<int>(a)) == axes.end()) CHECK(c[a] == c0[a]);
        // Member number = coordinates on `axes`, first axis most significant.
        int number = 0;
        for (int a : axes) number = number * m.size(static_cast<std::size_t>(a)) + c[static_cast<std::size_t>(a)];
        CHECK(number == static_cast<int>(k));
      }
    }
    CHECK(static_cast<int>(seen.size()) == m.num_devices());
  });
}

TEST_CASE("device groups: known layouts, names, other integer ranges, bad axes", "[runtime][collectives]") {
  MeshAxes m({2, 4}, {"a", "b"});
  CHECK(device_groups(m, {}) == std::vector<std::vector<int>>{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}});
  CHECK(device_groups(m, {0}) == std::vector<std::vector<int>>{{0, 4}, {1, 5}, {2, 6}, {3, 7}});
  CHECK(device_groups(m, {1}) == std::vector<std::vector<int>>{{0, 1, 2, 3}, {4, 5, 6, 7}});
  CHECK(device_groups(m, {0, 1}) == std::vector<std::vector<int>>{{0, 1, 2, 3, 4, 5, 6, 7}});
  CHECK(device_groups(m, {1, 0}) == std::vector<std::vector<int>>{{0, 4, 1, 5, 2, 6, 3, 7}});
  CHECK(device_groups(m, axis_indices(m, {"b", "a"})) == device_groups(m, {1, 0}));
  FixedVector<std::uint8_t, max_mesh_axes> plan_axes{1};
  CHECK(device_groups(m, plan_axes) == device_groups(m, {1}));
  CHECK(device_groups(m, std::vector<std::size_t>{1, 0}) == device_groups(m, {1, 0}));
  MeshAxes cube({2, 2, 2}, {"x", "y", "z"});
  CHECK(device_groups(cube, {2, 0}) == std::vector<std::vector<int>>{{0, 4, 1, 5}, {2, 6, 3, 7}});  // z major, then x
  CHECK_THROWS_WITH(device_groups(m, {2}),
                    ContainsSubstring("mesh ('a': 2, 'b': 4) has 2 axes (0..1), there is no axis 2"));
  CHECK_THROWS_WITH(device_groups(m, {1, 1}), ContainsSubstring("axis 1 ('b') of mesh ('a': 2, 'b': 4) is given twice"));
  CHECK_THROWS_WITH(axis_indices(m, {"a", "c"}), ContainsSubstring("mesh ('a': 2, 'b': 4) has no axis 'c'"));
}

// ---- all_reduce and reduce_scatter ----

TEST_CASE("all_reduce and reduce_scatter over every group of every mesh", "[runtime][collectives]") {
  auto& coll = in_process_collectives();
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::max}) {
    for_every_group_layout([&](Mesh const& mesh, std::vector<int> const& axes, auto const& groups) {
      INFO("op " << static_cast<int>(op));
      // The held box is an interior box of a larger tensor, so offsets matter.
      Shape whole{24 * 2, 30};
      Box held{{24, 48}, {5, 15}};
      for (auto const& positions : groups) {
        std::size_t n = positions.size();
        // reduce_scatter pieces: the rows split over the members (24 rows: every group size divides
        // them), or for odd subsets the 10 columns when the group size divides them (strided pieces).
        std::size_t dim = axes.size() % 2 == 1 && 10 % n == 0 ? 1 : 0;
        std::vector<Box> pieces;
        for (std::size_t k = 0; k < n; ++k) pieces.push_back(split(held, dim, k, n));
        std::vector<std::int64_t> in_n(n, held.num_elements()), out_n(n, held.num_elements()), piece_n;
        for (auto const& p : pieces) piece_n.push_back(p.num_elements());
        Group ar(mesh, positions, in_n, out_n, 8), rs(mesh, positions, in_n, piece_n, 8);
        std::vector<std::vector<double>> data;
        for (std::size_t k = 0; k < n; ++k) {
          data.push_back(box_data<double>(whole, held, k, true));
          ar.ins[k].fill(data[k]);
          rs.ins[k].fill(data[k]);
        }
        std::vector<double> expected = data[0];
        for (std::size_t k = 1; k < n; ++k)
          for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = reduce_ref(op, expected[i], data[k][i]);
        coll.all_reduce(DType::float64, op, ar.members, held);
        coll.reduce_scatter(DType::float64, op, rs.members, held, pieces);
        for (std::size_t k = 0; k < n; ++k) {
          CHECK(ar.outs[k].read<double>(held.num_elements()) == expected);
          std::vector<double> piece(static_cast<std::size_t>(pieces[k].num_elements()));
          host_copy(expected, held, piece, pieces[k], pieces[k]);
          CHECK(rs.outs[k].read<double>(pieces[k].num_elements()) == piece);
        }
      }
    });
  }
}

TEST_CASE("all_reduce: every op and dtype, and long buffers split over members", "[runtime][collectives]") {
  auto& coll = in_process_collectives();
  auto mesh = make_mesh({8}, {"x"});
  auto positions = device_groups(mesh.axes(), {0})[0];
  Box held{{0, 3}, {0, 40000}};  // several work items per member, a partial last one
  std::int64_t count = held.num_elements();
  auto run = [&]<class T>(T, DType dtype) {
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::prod, ReduceOp::max, ReduceOp::min}) {
      INFO(name(dtype) << " op " << static_cast<int>(op));
      Group g(mesh, positions, std::vector<std::int64_t>(8, count), std::vector<std::int64_t>(8, count), sizeof(T));
      std::vector<std::vector<T>> data;
      for (std::size_t k = 0; k < 8; ++k) {
        std::vector<T> v(static_cast<std::size_t>(count));
        // Small values so that products of 8 stay exact in every dtype; distinct per member.
        for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(static_cast<int>((i * 7 + k * 3) % 5) - 2);
        g.ins[k].fill(v);
        data.push_back(v);
      }
      std::vector<T> expected = data[0];
      for (std::size_t k = 1; k < 8; ++k)
        for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = reduce_ref(op, expected[i], data[k][i]);
      coll.all_reduce(dtype, op, g.members, held);
      for (std::size_t k = 0; k < 8; ++k) CHECK(g.outs[k].read<T>(count) == expected);
    }
  };
  run(float{}, DType::float32);
  run(double{}, DType::float64);
  run(std::int32_t{}, DType::int32);
}

TEST_CASE("all_reduce and reduce_scatter: groups larger than one pass over the inputs (devices may repeat)",
          "[runtime][collectives]") {
  // 20 members on the 8 devices (a group's members need not be distinct devices in-process): the
  // inputs are combined 8 at a time, in member order.
  auto& coll = in_process_collectives();
  std::size_t n = 20;
  Box held{{0, 40}, {3, 40}};
  std::int64_t count = held.num_elements();
  std::vector<Buffer> ins, outs, piece_outs;
  std::vector<GroupMember> members, rs_members;
  std::vector<Box> pieces;
  std::vector<std::vector<std::int32_t>> data;
  for (std::size_t k = 0; k < n; ++k) {
    ins.emplace_back(static_cast<std::size_t>(count) * 4);
    outs.emplace_back(static_cast<std::size_t>(count) * 4);
    pieces.push_back(split(held, 0, k, n));
    piece_outs.emplace_back(static_cast<std::size_t>(pieces[k].num_elements()) * 4);
    std::vector<std::int32_t> v(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<std::int32_t>((i * 13 + k * 7) % 101) - 50;
    ins[k].fill(v);
    data.push_back(v);
    int dev = static_cast<int>((k * 3) % 8);
    members.push_back({dev, ins[k].data(), outs[k].data()});
    rs_members.push_back({dev, ins[k].data(), piece_outs[k].data()});
  }
  for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::min}) {
    INFO("op " << static_cast<int>(op));
    std::vector<std::int32_t> expected = data[0];
    for (std::size_t k = 1; k < n; ++k)
      for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = reduce_ref(op, expected[i], data[k][i]);
    coll.all_reduce(DType::int32, op, members, held);
    coll.reduce_scatter(DType::int32, op, rs_members, held, pieces);
    for (std::size_t k = 0; k < n; ++k) {
      CHECK(outs[k].read<std::int32_t>(count) == expected);
      std::vector<std::int32_t> piece(static_cast<std::size_t>(pieces[k].num_elements()));
      host_copy(expected, held, piece, pieces[k], pieces[k]);
      CHECK(piece_outs[k].read<std::int32_t>(pieces[k].num_elements()) == piece);
    }
  }
  // Sums of floats in member order, bit for bit (a different order would round differently).
  std::vector<std::vector<float>> fdata;
  for (std::size_t k = 0; k < n; ++k) {
    std::vector<float> v(static_cast<std::size_t>(count));
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = 1.0f / static_cast<float>(1 + (i * 5 + k * 11) % 97);
    ins[k].fill(v);
    fdata.push_back(v);
  }
  std::vector<float> fsum = fdata[0];
  for (std::size_t k = 1; k < n; ++k)
    for (std::size_t i = 0; i < fsum.size(); ++i) fsum[i] += fdata[k][i];
  coll.all_reduce(DType::float32, ReduceOp::sum, members, held);
  for (std::size_t k = 0; k < n; ++k) CHECK(test::bitwise_equal(outs[k].read<float>(count), fsum));
  // More than 64 members is refused.
  std::vector<GroupMember> too_many(65, members[0]);
  CHECK_THROWS_WITH(coll.all_reduce(DType::int32, ReduceOp::sum, too_many, held),
                    ContainsSubstring("all_reduce: in-process reductions support groups of at most 64 devices, got 65"));
}

// ---- all_gather ----

template <class T>
void check_all_gather(Mesh const& mesh, std::vector<int> const& positions, Shape const& shape, Box const& whole,
                      std::vector<Box> const& pieces, DType dtype) {
  std::size_t n = positions.size();
  std::vector<std::int64_t> in_n, out_n(n, whole.num_elements());
  for (auto const& p : pieces) in_n.push_back(p.num_elements());
  Group g(mesh, positions, in_n, out_n, sizeof(T));
  for (std::size_t k = 0; k < n; ++k) g.ins[k].fill(box_data<T>(shape, pieces[k], 0, false));
  in_process_collectives().all_gather(dtype, g.members, pieces);
  auto expected = box_data<T>(shape, whole, 0, false);
  for (std::size_t k = 0; k < n; ++k) CHECK(g.outs[k].read<T>(whole.num_elements()) == expected);
}

TEST_CASE("all_gather over every group of every mesh, along every dimension", "[runtime][collectives]") {
  Shape shape{24, 24, 12};
  Box whole{{0, 24}, {0, 24}, {4, 12}};  // 8 of the 12 columns, so the union is not the whole tensor
  for_every_group_layout([&](Mesh const& mesh, std::vector<int> const&, auto const& groups) {
    for (auto const& positions : groups) {
      std::size_t n = positions.size();
      for (std::size_t dim = 0; dim < 3; ++dim) {
        if (whole[dim].size() % static_cast<std::int64_t>(n) != 0) continue;  // 3 and 6 do not divide 8
        INFO("pieces along dimension " << dim);
        std::vector<Box> pieces;
        for (std::size_t k = 0; k < n; ++k) pieces.push_back(split(whole, dim, k, n));
        check_all_gather<float>(mesh, positions, shape, whole, pieces, DType::float32);
      }
      // Pieces in reverse order (member 0 holds the last piece): the union is the same.
      std::vector<Box> reversed;
      for (std::size_t k = 0; k < n; ++k) reversed.push_back(split(whole, 1, n - 1 - k, n));
      check_all_gather<float>(mesh, positions, shape, whole, reversed, DType::float32);
    }
  });
}

TEST_CASE("all_gather: every dtype, 2-D tilings, unequal and empty pieces", "[runtime][collectives]") {
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  auto positions = device_groups(mesh.axes(), {0, 1})[0];
  Shape shape{16, 40};
  Box whole{{0, 16}, {0, 40}};
  std::vector<Box> grid;  // a 2x4 grid of blocks, member k = block (k / 4, k % 4)
  for (std::size_t k = 0; k < 8; ++k) grid.push_back(split(split(whole, 0, k / 4, 2), 1, k % 4, 4));
  check_all_gather<float>(mesh, positions, shape, whole, grid, DType::float32);
  check_all_gather<double>(mesh, positions, shape, whole, grid, DType::float64);
  check_all_gather<std::int32_t>(mesh, positions, shape, whole, grid, DType::int32);
  // Unequal rows, and three members holding nothing.
  std::vector<Box> uneven{{{0, 1}, {0, 40}},  {{1, 1}, {0, 40}}, {{1, 9}, {0, 40}},   {{9, 9}, {0, 0}},
                          {{9, 16}, {0, 17}}, {{9, 16}, {17, 40}}, {{16, 16}, {0, 40}}, {{0, 0}, {0, 0}}};
  check_all_gather<double>(mesh, positions, shape, whole, uneven, DType::float64);
  // A large tensor, so every piece spans several work items.
  Shape big{64, 4096};
  Box big_whole = Box::whole(big);
  std::vector<Box> rows;
  for (std::size_t k = 0; k < 8; ++k) rows.push_back(split(big_whole, 0, k, 8));
  check_all_gather<std::int32_t>(mesh, positions, big, big_whole, rows, DType::int32);
}

// ---- all_to_all ----

template <class T>
void check_all_to_all(Mesh const& mesh, std::vector<int> const& positions, Shape const& shape,
                      std::vector<Box> const& in_boxes, std::vector<Box> const& out_boxes, DType dtype) {
  std::size_t n = positions.size();
  std::vector<std::int64_t> in_n, out_n;
  for (auto const& b : in_boxes) in_n.push_back(b.num_elements());
  for (auto const& b : out_boxes) out_n.push_back(b.num_elements());
  Group g(mesh, positions, in_n, out_n, sizeof(T));
  std::vector<std::vector<T>> inputs;
  for (std::size_t k = 0; k < n; ++k) {
    inputs.push_back(box_data<T>(shape, in_boxes[k], 0, false));
    g.ins[k].fill(inputs[k]);
  }
  in_process_collectives().all_to_all(dtype, g.members, in_boxes, out_boxes);
  for (std::size_t k = 0; k < n; ++k) {
    // Reference: out box k assembled on the host from every member's input.
    std::vector<T> expected(static_cast<std::size_t>(out_boxes[k].num_elements()));
    for (std::size_t j = 0; j < n; ++j)
      host_copy(inputs[j], in_boxes[j], expected, out_boxes[k], intersect(out_boxes[k], in_boxes[j]));
    CHECK(expected == box_data<T>(shape, out_boxes[k], 0, false));  // the reference itself
    CHECK(g.outs[k].read<T>(out_boxes[k].num_elements()) == expected);
  }
}

TEST_CASE("all_to_all over every group of every mesh: split one dimension, concatenate another",
          "[runtime][collectives]") {
  Shape shape{24, 24, 8};
  Box whole = Box::whole(shape);
  for_every_group_layout([&](Mesh const& mesh, std::vector<int> const&, auto const& groups) {
    for (std::size_t g = 0; g < groups.size(); ++g) {
      auto const& positions = groups[g];
      std::size_t n = positions.size();
      // Each group works on its own block of dimension 2 when there are several groups (as the
      // groups of a sharded tensor would), the whole of it otherwise.
      Box base = groups.size() == 2 || groups.size() == 4 ? split(whole, 2, g, groups.size()) : whole;
      for (std::size_t from = 0; from < 3; ++from)
        for (std::size_t to = 0; to < 3; ++to) {
          if (base[to].size() % static_cast<std::int64_t>(n) != 0 || base[from].size() % static_cast<std::int64_t>(n) != 0)
            continue;
          if (from == to && from != 0) continue;  // no data crosses members: one such case is enough
          INFO("split dimension " << from << " -> split dimension " << to);
          std::vector<Box> in_boxes, out_boxes;
          for (std::size_t k = 0; k < n; ++k) {
            in_boxes.push_back(split(base, from, k, n));
            out_boxes.push_back(split(base, to, k, n));
          }
          check_all_to_all<float>(mesh, positions, shape, in_boxes, out_boxes, DType::float32);
        }
    }
  });
}

TEST_CASE("all_to_all: every dtype, 2-D re-tilings, overlapping and partial out boxes", "[runtime][collectives]") {
  auto mesh = make_mesh({2, 2, 2}, {"a", "b", "c"});
  auto positions = device_groups(mesh.axes(), {2, 0, 1})[0];
  Shape shape{16, 24};
  Box whole = Box::whole(shape);
  std::vector<Box> rows, grid, transposed_grid;
  for (std::size_t k = 0; k < 8; ++k) {
    rows.push_back(split(whole, 0, k, 8));
    grid.push_back(split(split(whole, 0, k / 2, 4), 1, k % 2, 2));
    transposed_grid.push_back(split(split(whole, 1, k / 2, 4), 0, k % 2, 2));
  }
  check_all_to_all<float>(mesh, positions, shape, rows, grid, DType::float32);
  check_all_to_all<double>(mesh, positions, shape, grid, transposed_grid, DType::float64);
  check_all_to_all<std::int32_t>(mesh, positions, shape, transposed_grid, rows, DType::int32);
  // Out boxes may overlap (member 0 gathers everything, others take overlapping windows) or be empty.
  std::vector<Box> windows{whole};
  for (std::int64_t k = 1; k < 7; ++k) windows.push_back(Box{{k, k + 5}, {2 * k, 2 * k + 9}});
  windows.push_back(Box{{3, 3}, {0, 24}});
  check_all_to_all<double>(mesh, positions, shape, grid, windows, DType::float64);
}

// ---- collective_permute ----

TEST_CASE("collective_permute over every group of every mesh: shifts, swaps, partial permutations",
          "[runtime][collectives]") {
  Shape shape{64, 12};
  for_every_group_layout([&](Mesh const& mesh, std::vector<int> const&, auto const& groups) {
    for (auto const& positions : groups) {
      int n = static_cast<int>(positions.size());
      // Member k holds block k of 64 rows (by 8: every group size but 3 and 6 divides it; those use 4 rows).
      std::int64_t rows = 64 % n == 0 ? 64 / n : 4;
      std::vector<Box> boxes;
      for (int k = 0; k < n; ++k) boxes.push_back(Box{{k * rows, (k + 1) * rows}, {0, 12}});
      std::vector<std::vector<PermutePair>> cases;
      std::vector<PermutePair> ring, reverse, partial;
      for (int k = 0; k < n; ++k) {
        ring.push_back({k, (k + 1) % n});
        reverse.push_back({k, n - 1 - k});
        if (k % 2 == 0 && k + 1 < n) partial.push_back({k + 1, k});  // odd members to even ones; odd get nothing
      }
      cases = {ring, reverse, partial, {}};
      for (auto const& pairs : cases) {
        INFO(pairs.size() << " pairs");
        std::vector<std::int64_t> counts(static_cast<std::size_t>(n), rows * 12);
        Group g(mesh, positions, counts, counts, sizeof(float));
        std::vector<float> sentinel(static_cast<std::size_t>(rows * 12), -1.0f);
        for (int k = 0; k < n; ++k) {
          g.ins[static_cast<std::size_t>(k)].fill(box_data<float>(shape, boxes[static_cast<std::size_t>(k)], 0, false));
          g.outs[static_cast<std::size_t>(k)].fill(sentinel);
        }
        // The out boxes are where each target's data now lives: the source's box.
        std::vector<Box> out_boxes = boxes;
        for (auto [s, t] : pairs) out_boxes[static_cast<std::size_t>(t)] = boxes[static_cast<std::size_t>(s)];
        in_process_collectives().collective_permute(DType::float32, g.members, boxes, out_boxes, pairs);
        std::vector<int> source(static_cast<std::size_t>(n), -1);
        for (auto [s, t] : pairs) source[static_cast<std::size_t>(t)] = s;
        for (int k = 0; k < n; ++k) {
          auto got = g.outs[static_cast<std::size_t>(k)].read<float>(rows * 12);
          int s = source[static_cast<std::size_t>(k)];
          if (s < 0) CHECK(got == sentinel);  // no pair targets k: its out is untouched
          else CHECK(got == box_data<float>(shape, boxes[static_cast<std::size_t>(s)], 0, false));
        }
      }
    }
  });
}

TEST_CASE("collective_permute: every dtype, a source to several targets, boxes of the same extent elsewhere",
          "[runtime][collectives]") {
  auto mesh = make_mesh({4, 2}, {"a", "b"});
  auto positions = device_groups(mesh.axes(), {1, 0})[0];
  Shape shape{8, 6, 10};
  auto run = [&]<class T>(T, DType dtype) {
    INFO(name(dtype));
    std::vector<Box> in_boxes, out_boxes;
    for (std::int64_t k = 0; k < 8; ++k) {
      in_boxes.push_back(Box{{k, k + 1}, {0, 6}, {0, 10}});
      out_boxes.push_back(Box{{0, 6}, {k % 4, k % 4 + 1}, {0, 10}});  // extent (6, 1, 10): not a match
    }
    in_boxes[2] = Box{{0, 8}, {2, 3}, {1, 10}};  // extent (8, 1, 9)
    out_boxes[5] = Box{{0, 8}, {4, 5}, {0, 9}};  // same extent, another place
    out_boxes[6] = Box{{0, 8}, {5, 6}, {1, 10}};
    out_boxes[7] = in_boxes[2];
    std::vector<PermutePair> pairs{{2, 5}, {2, 6}, {2, 7}};  // one source, three targets
    std::vector<std::int64_t> in_n, out_n;
    for (auto const& b : in_boxes) in_n.push_back(b.num_elements());
    for (auto const& b : out_boxes) out_n.push_back(b.num_elements());
    Group g(mesh, positions, in_n, out_n, sizeof(T));
    for (std::size_t k = 0; k < 8; ++k) g.ins[k].fill(box_data<T>(shape, in_boxes[k], 0, false));
    in_process_collectives().collective_permute(dtype, g.members, in_boxes, out_boxes, pairs);
    auto expected = box_data<T>(shape, in_boxes[2], 0, false);
    for (std::size_t t : {5u, 6u, 7u}) CHECK(g.outs[t].read<T>(72) == expected);
  };
  run(float{}, DType::float32);
  run(double{}, DType::float64);
  run(std::int32_t{}, DType::int32);
}

// ---- errors ----

TEST_CASE("collectives refuse bad boxes and pairs, naming them, before writing anything",
          "[runtime][collectives][error]") {
  auto& coll = in_process_collectives();
  auto mesh = make_mesh({4, 2}, {"a", "b"});
  auto positions = device_groups(mesh.axes(), {0})[0];  // 4 members
  std::vector<std::int64_t> counts(4, 64);
  Group g(mesh, positions, counts, counts, 4);
  std::vector<float> sentinel(64, -1.0f);
  for (auto& o : g.outs) o.fill(sentinel);
  Box row0{{0, 2}, {0, 8}}, row1{{2, 4}, {0, 8}}, row2{{4, 6}, {0, 8}}, row3{{6, 8}, {0, 8}};

  // all_gather: overlapping pieces, a gap, a wrong count, a wrong rank.
  CHECK_THROWS_WITH(coll.all_gather(DType::float32, g.members, std::vector<Box>{row0, row1, Box{{3, 5}, {0, 8}}, row3}),
                    ContainsSubstring("all_gather: the pieces do not tile their union [0:8, 0:8]: pieces[1] [2:4, 0:8] "
                                      "and pieces[2] [3:5, 0:8] overlap"));
  CHECK_THROWS_WITH(coll.all_gather(DType::float32, g.members, std::vector<Box>{row0, row1, row3, Box{{6, 8}, {0, 0}}}),
                    ContainsSubstring("all_gather: the pieces do not tile their union [0:8, 0:8]: they cover 48 of its "
                                      "64 elements"));
  CHECK_THROWS_WITH(coll.all_gather(DType::float32, g.members, std::vector<Box>{row0, row1, row2}),
                    ContainsSubstring("all_gather: 3 pieces for a group of 4 members"));
  CHECK_THROWS_WITH(coll.all_gather(DType::float32, g.members, std::vector<Box>{row0, row1, row2, Box{{6, 8}}}),
                    ContainsSubstring("all_gather: pieces[3] [6:8] has rank 1 but the collective's boxes have rank 2"));

  // all_to_all: an out box not covered, covered twice, mismatched counts.
  std::vector<Box> rows{row0, row1, row2, row3};
  CHECK_THROWS_WITH(coll.all_to_all(DType::float32, g.members, rows,
                                    std::vector<Box>{row0, row1, row2, Box{{6, 9}, {0, 8}}}),
                    ContainsSubstring("all_to_all: out_boxes[3] [6:9, 0:8] is not covered by the members' in boxes: 8 "
                                      "of its 24 elements lie in none of them"));
  CHECK_THROWS_WITH(coll.all_to_all(DType::float32, g.members, std::vector<Box>{row0, row1, Box{{3, 6}, {0, 8}}, row3},
                                    rows),
                    ContainsSubstring("all_to_all: in_boxes[1] [2:4, 0:8] and in_boxes[2] [3:6, 0:8] overlap inside "
                                      "out_boxes[1] [2:4, 0:8]; every element must come from one member"));
  CHECK_THROWS_WITH(coll.all_to_all(DType::float32, g.members, rows, std::vector<Box>{row0}),
                    ContainsSubstring("all_to_all: 1 out_boxes for a group of 4 members"));

  // collective_permute: a target named twice, box shapes that differ, a member out of range.
  CHECK_THROWS_WITH(coll.collective_permute(DType::float32, g.members, rows, rows,
                                            std::vector<PermutePair>{{0, 1}, {1, 2}, {3, 2}}),
                    ContainsSubstring("collective_permute: member 2 is the target of two pairs, (1, 2) and (3, 2)"));
  CHECK_THROWS_WITH(coll.collective_permute(DType::float32, g.members, rows,
                                            std::vector<Box>{row0, Box{{0, 8}, {0, 2}}, row2, row3},
                                            std::vector<PermutePair>{{0, 1}}),
                    ContainsSubstring("collective_permute: pair (0, 1) moves in_boxes[0] [0:2, 0:8] of shape (2, 8) "
                                      "into out_boxes[1] [0:8, 0:2] of shape (8, 2); the shapes must be equal"));
  CHECK_THROWS_WITH(coll.collective_permute(DType::float32, g.members, rows, rows, std::vector<PermutePair>{{0, 4}}),
                    ContainsSubstring("collective_permute: pair (0, 4) names member 4 but the group has 4 members (0..3)"));

  // reduce_scatter: a piece outside the reduced box; a member on a device that does not exist.
  CHECK_THROWS_WITH(coll.reduce_scatter(DType::float32, ReduceOp::sum, g.members, Box{{0, 8}, {0, 8}},
                                        std::vector<Box>{row0, row1, row2, Box{{6, 9}, {0, 8}}}),
                    ContainsSubstring("reduce_scatter: pieces[3] [6:9, 0:8] is not inside the reduced box [0:8, 0:8]"));
  auto bad = g.members;
  bad[1].device = 8;
  CHECK_THROWS_WITH(coll.all_gather(DType::float32, bad, rows),
                    ContainsSubstring("device 8 does not exist: this process has 8 devices"));

  // Nothing was written.
  for (auto const& o : g.outs) CHECK(o.read<float>(64) == sentinel);
}
