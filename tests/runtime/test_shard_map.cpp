// shard_map and the explicit collectives (runtime/shard_map.hpp, expr/manual_collective.hpp):
// every collective against a host reference on every test mesh (1-D, 2-D both ways, 1x8, 8x1,
// 2x2x2, 3x2 over 6 scrambled devices, 1 device) and every ordered subset of its axes; shard_map
// versions of the Megatron block and of a sharded softmax against the automatic ones, bit for bit;
// nesting with jit; explain and visualize inside the body; every error with its message.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <functional>
#include <limits>
#include <sstream>
#include <vector>

#include "support/close.hpp"
#include "support/meshes.hpp"
#include "tessel/core/device_groups.hpp"
#include "tessel/tessel.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace tessel;

namespace {

constexpr std::int64_t block = 24;  // rows and columns of each device's block: divisible by 1, 2, 3, 4, 6, 8

// Every axis of the mesh on one dimension: each device's block is rows [p * block, (p + 1) * block).
DimSpec every_axis(Mesh const& mesh) {
  FixedVector<AxisName, max_mesh_axes> names;
  for (std::size_t a = 0; a < mesh.num_axes(); ++a) names.push_back(mesh.axes().name(a));
  return DimSpec::of(names);
}
DimSpec names_of(Mesh const& mesh, std::vector<int> const& axes) {
  FixedVector<AxisName, max_mesh_axes> names;
  for (int a : axes) names.push_back(mesh.axes().name(static_cast<std::size_t>(a)));
  return DimSpec::of(names);
}

using Block = std::vector<float>;  // row-major
// What member m of a group gets, from the group's blocks (each block x block).
using Reference = std::function<Block(std::vector<Block> const& members, int m)>;

// Runs `body` on every device's block of a (devices * block, block) tensor on `mesh`, and checks
// each device's result block against `reference` over its group of `axes`, exactly (the data are
// small integers, so every sum is exact in any order).
template <class Body>
void check_collective(Mesh const& mesh, std::vector<int> const& axes, Body body, Reference const& reference) {
  int const devices = mesh.num_devices();
  std::vector<float> host(static_cast<std::size_t>(devices * block * block));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(static_cast<int>((i * 7919) % 101) - 50);
  PartitionSpec spec(every_axis(mesh), None);
  auto x = device_put(host, {devices * block, block}, NamedSharding(mesh, spec));
  DimSpec names = names_of(mesh, axes);
  auto f = shard_map([&](Tensor<float> const& local) { return body(local, names); }, mesh, {spec}, spec);
  Tensor<float> y = f(x);
  auto got = y.to_host();
  auto block_of = [&](int pos) {
    return Block(host.begin() + pos * block * block, host.begin() + (pos + 1) * block * block);
  };
  std::size_t const per_device = got.size() / static_cast<std::size_t>(devices);
  for (auto const& group : device_groups(mesh.axes(), axes)) {
    std::vector<Block> members;
    for (int pos : group) members.push_back(block_of(pos));
    for (std::size_t m = 0; m < group.size(); ++m) {
      Block want = reference(members, static_cast<int>(m));
      REQUIRE(want.size() == per_device);
      Block have(got.begin() + static_cast<std::ptrdiff_t>(group[m] * per_device),
                 got.begin() + static_cast<std::ptrdiff_t>((group[m] + 1) * per_device));
      INFO("mesh " << to_string(mesh) << ", axes " << to_string(PartitionSpec(names)) << ", device position "
                   << group[m] << " (member " << m << ")");
      REQUIRE(have == want);
    }
  }
}

float at(Block const& b, std::int64_t r, std::int64_t c) { return b[static_cast<std::size_t>(r * block + c)]; }

Block combine(std::vector<Block> const& members, float (*op)(float, float)) {
  Block out = members[0];
  for (std::size_t m = 1; m < members.size(); ++m)
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = op(out[i], members[m][i]);
  return out;
}

}  // namespace

TEST_CASE("shard_map collectives match host references on every mesh and axis subset", "[shard_map][manual_collective]") {
  for (auto const& mesh : test::all_meshes()) {
    for (auto const& axes : test::ordered_axis_subsets(mesh.axes())) {
      if (axes.empty()) continue;  // a collective names at least one axis
      INFO("mesh " << to_string(mesh));
      check_collective(mesh, axes, [](auto const& x, DimSpec const& a) { return lax::psum(x, a); },
                       [](auto const& ms, int) { return combine(ms, [](float p, float q) { return p + q; }); });
      check_collective(mesh, axes, [](auto const& x, DimSpec const& a) { return lax::pmax(x, a); },
                       [](auto const& ms, int) { return combine(ms, [](float p, float q) { return std::max(p, q); }); });
      check_collective(mesh, axes, [](auto const& x, DimSpec const& a) { return lax::pmin(x, a); },
                       [](auto const& ms, int) { return combine(ms, [](float p, float q) { return std::min(p, q); }); });
      check_collective(mesh, axes, [](auto const& x, DimSpec const& a) { return lax::pmean(x, a); },
                       [](auto const& ms, int) {
                         Block s = combine(ms, [](float p, float q) { return p + q; });
                         for (auto& v : s) v = static_cast<float>(static_cast<double>(v) / static_cast<double>(ms.size()));
                         return s;
                       });
      // all_gather, stacked on a new leading axis then flattened back into rows by the layout:
      // tiled along rows, the group's blocks one under the other; along columns, side by side.
      check_collective(
          mesh, axes, [](auto const& x, DimSpec const& a) { return lax::all_gather(x, a, {.axis = 0, .tiled = true}); },
          [](auto const& ms, int) {
            Block out;
            for (auto const& b : ms) out.insert(out.end(), b.begin(), b.end());
            return out;
          });
      check_collective(
          mesh, axes, [](auto const& x, DimSpec const& a) { return lax::all_gather(x, a, {.axis = 1, .tiled = true}); },
          [](auto const& ms, int) {
            Block out;
            for (std::int64_t r = 0; r < block; ++r)
              for (auto const& b : ms)
                for (std::int64_t c = 0; c < block; ++c) out.push_back(at(b, r, c));
            return out;
          });
      // Not tiled, a new axis of the group's size at position 1: (rows, members, columns).
      check_collective(
          mesh, axes, [](auto const& x, DimSpec const& a) { return reshape(lax::all_gather(x, a, {.axis = 1}), {block, -1}); },
          [](auto const& ms, int) {
            Block out;
            for (std::int64_t r = 0; r < block; ++r)
              for (auto const& b : ms)
                for (std::int64_t c = 0; c < block; ++c) out.push_back(at(b, r, c));
            return out;
          });
      // psum_scatter: member m keeps the m-th piece of the sum along rows (tiled) or columns.
      check_collective(
          mesh, axes,
          [](auto const& x, DimSpec const& a) { return lax::psum_scatter(x, a, {.scatter_dimension = 0, .tiled = true}); },
          [](auto const& ms, int m) {
            Block s = combine(ms, [](float p, float q) { return p + q; });
            std::int64_t rows = block / static_cast<std::int64_t>(ms.size());
            return Block(s.begin() + m * rows * block, s.begin() + (m + 1) * rows * block);
          });
      check_collective(
          mesh, axes,
          [](auto const& x, DimSpec const& a) { return lax::psum_scatter(x, a, {.scatter_dimension = 1, .tiled = true}); },
          [](auto const& ms, int m) {
            Block s = combine(ms, [](float p, float q) { return p + q; }), out;
            std::int64_t cols = block / static_cast<std::int64_t>(ms.size());
            for (std::int64_t r = 0; r < block; ++r)
              for (std::int64_t c = m * cols; c < (m + 1) * cols; ++c) out.push_back(at(s, r, c));
            return out;
          });
      // all_to_all: member m gets piece m of every member's split axis, concatenated in member order.
      check_collective(
          mesh, axes, [](auto const& x, DimSpec const& a) { return lax::all_to_all(x, a, 0, 1, true); },
          [](auto const& ms, int m) {
            std::int64_t rows = block / static_cast<std::int64_t>(ms.size());
            Block out;
            for (std::int64_t r = m * rows; r < (m + 1) * rows; ++r)
              for (auto const& b : ms)
                for (std::int64_t c = 0; c < block; ++c) out.push_back(at(b, r, c));
            return out;
          });
      check_collective(
          mesh, axes, [](auto const& x, DimSpec const& a) { return lax::all_to_all(x, a, 1, 0, true); },
          [](auto const& ms, int m) {
            std::int64_t cols = block / static_cast<std::int64_t>(ms.size());
            Block out;
            for (auto const& b : ms)
              for (std::int64_t r = 0; r < block; ++r)
                for (std::int64_t c = m * cols; c < (m + 1) * cols; ++c) out.push_back(at(b, r, c));
            return out;
          });
      check_collective(
          mesh, axes, [](auto const& x, DimSpec const& a) { return lax::all_to_all(x, a, 0, 0, true); },
          [](auto const& ms, int m) {
            std::int64_t rows = block / static_cast<std::int64_t>(ms.size());
            Block out;
            for (auto const& b : ms) out.insert(out.end(), b.begin() + m * rows * block, b.begin() + (m + 1) * rows * block);
            return out;
          });
      // ppermute: a cyclic shift (everyone receives), then one pair only (the others get zeros).
      check_collective(
          mesh, axes,
          [&](auto const& x, DimSpec const& a) {
            int n = 1;
            for (int ax : axes) n *= mesh.axes().size(static_cast<std::size_t>(ax));
            std::vector<std::pair<int, int>> perm;
            for (int m = 0; m < n; ++m) perm.emplace_back(m, (m + 1) % n);
            return lax::ppermute(x, a, perm);
          },
          [](auto const& ms, int m) {
            int n = static_cast<int>(ms.size());
            return ms[static_cast<std::size_t>((m + n - 1) % n)];
          });
      check_collective(
          mesh, axes, [](auto const& x, DimSpec const& a) { return lax::ppermute(x, a, {{0, 0}}) * 2.0f; },
          [](auto const& ms, int m) {
            Block out = m == 0 ? ms[0] : Block(ms[0].size(), 0.0f);
            for (auto& v : out) v *= 2.0f;
            return out;
          });
      // axis_index, broadcast over the block (and mixed with it: the block plus its coordinate).
      check_collective(
          mesh, axes, [](auto const& x, DimSpec const& a) { return x + astype<float>(lax::axis_index(a)); },
          [](auto const& ms, int m) {
            Block out = ms[static_cast<std::size_t>(m)];
            for (auto& v : out) v += static_cast<float>(m);
            return out;
          });
    }
  }
}

TEST_CASE("shard_map's non-tiled forms: psum_scatter drops, all_to_all moves the group axis", "[shard_map]") {
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  // Each device holds a (4, 3) block; the rows over 'b' (4 members) are scattered / exchanged.
  std::vector<float> host(8 * 4 * 3);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(i);
  auto x = device_put(host, {32, 3}, NamedSharding(mesh, P({"a", "b"}, None)));
  auto scatter = shard_map([](auto const& l) { return lax::psum_scatter(l, "b"); }, mesh, {P({"a", "b"}, None)},
                           P({"a", "b"}));
  Tensor<float> s = scatter(x);
  REQUIRE(s.shape() == Shape{24});  // each device: 3 values, row k of the group's summed blocks
  auto sh = s.to_host();
  for (int pa = 0; pa < 2; ++pa)
    for (int k = 0; k < 4; ++k)
      for (int c = 0; c < 3; ++c) {
        float want = 0;
        for (int m = 0; m < 4; ++m) want += host[static_cast<std::size_t>(((pa * 4 + m) * 4 + k) * 3 + c)];
        REQUIRE(sh[static_cast<std::size_t>((pa * 4 + k) * 3 + c)] == want);
      }
  // Not tiled: the split axis (4 = the group) goes, and a new axis 1 stacks the pieces by source.
  auto exchange = shard_map([](auto const& l) { return lax::all_to_all(l, "b", 0, 1); }, mesh, {P({"a", "b"}, None)},
                            P({"a", "b"}));
  Tensor<float> e = exchange(x);
  REQUIRE(e.shape() == Shape{24, 4});  // per device (3, 4): [c, source] = source's row k (k = own index)
  auto eh = e.to_host();
  for (int pa = 0; pa < 2; ++pa)
    for (int k = 0; k < 4; ++k)
      for (int c = 0; c < 3; ++c)
        for (int src = 0; src < 4; ++src)
          REQUIRE(eh[static_cast<std::size_t>(((pa * 4 + k) * 3 + c) * 4 + src)] ==
                  host[static_cast<std::size_t>(((pa * 4 + src) * 4 + k) * 3 + c)]);
}

TEST_CASE("shard_map Megatron block and sharded softmax equal the automatic plans bit for bit", "[shard_map]") {
  for (auto const& [dp, mp] : {std::pair{4, 2}, std::pair{2, 4}, std::pair{1, 8}, std::pair{8, 1}}) {
    auto mesh = make_mesh({dp, mp}, {"dp", "mp"});
    INFO("mesh " << to_string(mesh));
    auto x = device_put(random::normal(PRNGKey(1), {64, 32}), NamedSharding(mesh, P("dp", None)));
    auto w1 = device_put(random::normal(PRNGKey(2), {32, 64}), NamedSharding(mesh, P(None, "mp")));
    auto w2 = device_put(random::normal(PRNGKey(3), {64, 32}), NamedSharding(mesh, P("mp", None)));
    Tensor<float> automatic = matmul(relu(matmul(x, w1)), w2);
    auto manual = shard_map(
        [](auto const& xs, auto const& a, auto const& b) { return lax::psum(matmul(relu(matmul(xs, a)), b), "mp"); },
        mesh, {P("dp", None), P(None, "mp"), P("mp", None)}, P("dp", None));
    ExecutionCounts const before = execution_counts();
    Tensor<float> y = manual(x, w1, w2);
    ExecutionCounts const after = execution_counts();
    // Exactly the collective written: one all-reduce, nothing else moved between devices.
    for (auto c : plan::all_collectives)
      REQUIRE(after[c] - before[c] == (c == plan::Collective::all_reduce ? 1 : 0));
    REQUIRE(after.reshards == before.reshards);
    REQUIRE(y.sharding() == NamedSharding(mesh, P("dp", None)));
    REQUIRE(y.to_host() == automatic.to_host());
    // With the rows of the result scattered over mp as well: a reduce-scatter.
    auto scattered = shard_map(
        [](auto const& xs, auto const& a, auto const& b) {
          return lax::psum_scatter(matmul(relu(matmul(xs, a)), b), "mp", {.scatter_dimension = 0, .tiled = true});
        },
        mesh, {P("dp", None), P(None, "mp"), P("mp", None)}, P({"dp", "mp"}, None));
    REQUIRE(Tensor<float>(scattered(x, w1, w2)).to_host() == automatic.to_host());

    // softmax over rows split across mp: the row max and the row sum completed by pmax and psum.
    auto z = device_put(random::normal(PRNGKey(4), {16, 64}), NamedSharding(mesh, P("dp", "mp")));
    Tensor<float> soft = softmax(z, 1);
    auto manual_softmax = shard_map(
        [](auto const& zs) {
          Tensor<float> m = lax::pmax(max(zs, 1, true), "mp");
          Tensor<float> e = exp(zs - m);
          return e / lax::psum(sum(e, 1, true), "mp");
        },
        mesh, {P("dp", "mp")}, P("dp", "mp"));
    REQUIRE(Tensor<float>(manual_softmax(z)).to_host() == soft.to_host());
  }
}

TEST_CASE("shard_map nests with jit both ways, and explain shows the written collectives", "[shard_map]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  auto x = device_put(random::normal(PRNGKey(5), {8, 16}), NamedSharding(mesh, P("dp", "mp")));
  auto row_sums = shard_map([](auto const& l) { return lax::psum(sum(l, 1, true), "mp"); }, mesh, {P("dp", "mp")},
                            P("dp", None));
  Tensor<float> want = sum(x, 1, true);
  // jit calling shard_map.
  auto outer = jit([&](Tensor<float> const& a) { return row_sums(a * 2.0f); });
  test::require_close(Tensor<float>(outer(x)).to_host(), Tensor<float>(want * 2.0f).to_host());
  // shard_map calling a jitted function.
  auto inner = jit([](auto const& l) { return l * 2.0f; });
  auto body = shard_map([&](auto const& l) { return lax::psum(sum(inner(l), 1, true), "mp"); }, mesh,
                        {P("dp", "mp")}, P("dp", None));
  test::require_close(Tensor<float>(body(x)).to_host(), Tensor<float>(want * 2.0f).to_host());
  // explain: the mesh, the specs and the body's plan with its all-reduce over mp, named by the user op.
  std::string text = row_sums.explain(x);
  INFO(text);
  REQUIRE_THAT(text, ContainsSubstring("shard_map over Mesh('dp': 4, 'mp': 2"));
  REQUIRE_THAT(text, ContainsSubstring("in_specs (P('dp', 'mp'),) -> out_specs (P('dp', None),)"));
  REQUIRE_THAT(text, ContainsSubstring("psum      over mesh axes ('mp') (groups of 2), written in shard_map"));
  REQUIRE_THAT(text, ContainsSubstring("-- plan:\nkernel    reduce sum over axes (1)"));
  REQUIRE_THAT(text, ContainsSubstring("tessel::psum(mp)[psum#"));
  // jit's explain of a function that calls the shard_map shows the shard_map and its body's plan.
  std::string outer_text = outer.explain(x);
  INFO(outer_text);
  REQUIRE_THAT(outer_text, ContainsSubstring("evaluated inside the function:\n-- shard_map over Mesh('dp': 4, 'mp': 2"));
  REQUIRE_THAT(outer_text, ContainsSubstring("[mul]"));  // x * 2.0f, the shard_map's argument, evaluated first
  REQUIRE_THAT(outer_text, ContainsSubstring("psum      over mesh axes ('mp')"));
  REQUIRE_THAT(outer_text, ContainsSubstring("-- the function's own plan:\n"));
}

TEST_CASE("visualize_array_sharding draws a block inside shard_map as one per device", "[shard_map]") {
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  auto x = device_put(random::normal(PRNGKey(6), {8, 8}), NamedSharding(mesh, P("dp", None)));
  std::ostringstream picture;
  auto f = shard_map(
      [&](Tensor<float> const& l) {
        visualize_array_sharding(l, {.style = BoxStyle::ascii}, picture);
        return l;
      },
      mesh, {P("dp", None)}, P("dp", None));
  Tensor<float> y = f(x);
  REQUIRE(y.to_host() == x.to_host());
  INFO(picture.str());
  REQUIRE_THAT(picture.str(), ContainsSubstring("per-device (4, 8) blocks inside shard_map over ('dp': 2, 'mp': 4), "
                                                "one per device, differing along 'dp'"));
  REQUIRE_THAT(picture.str(), ContainsSubstring(std::string(platform_name()) == "cpu" ? "CPU 5" : "GPU 5"));
}

TEST_CASE("shard_map's replication check follows the documented rule", "[shard_map]") {
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  auto x = device_put(random::normal(PRNGKey(7), {8, 8}), NamedSharding(mesh, P("dp", "mp")));
  SECTION("a value split over mp cannot be claimed replicated over mp") {
    auto f = shard_map([](auto const& l) { return l * 2.0f; }, mesh, {P("dp", "mp")}, P("dp", None));
    REQUIRE_THROWS_WITH(f(x), ContainsSubstring("out_specs P('dp', None) for result 0 replicates it along mesh axis "
                                                "'mp', but its blocks differ along 'mp'"));
  }
  SECTION("psum, pmax, all_gather make it equal; a full ppermute of equal blocks keeps it equal") {
    auto g = shard_map([](auto const& l) { return lax::ppermute(lax::psum(l, "mp"), "mp", {{0, 1}, {1, 2}, {2, 3}, {3, 0}}); },
                       mesh, {P("dp", "mp")}, P("dp", None));
    Tensor<float> y = g(x);  // JAX's check refuses this (ppermute's result is always "varying" there)
    auto h = shard_map([](auto const& l) { return lax::all_gather(l, "mp", {.axis = 1, .tiled = true}); }, mesh,
                       {P("dp", "mp")}, P("dp", None));
    REQUIRE(Tensor<float>(h(x)).to_host() == x.to_host());
    REQUIRE(y.shape() == Shape{8, 2});
  }
  SECTION("a partial ppermute, axis_index, psum_scatter make it differ") {
    auto p = shard_map([](auto const& l) { return lax::ppermute(lax::psum(l, "mp"), "mp", {{0, 1}}); }, mesh,
                       {P("dp", "mp")}, P("dp", None));
    REQUIRE_THROWS_WITH(p(x), ContainsSubstring("its blocks differ along 'mp'"));
    auto i = shard_map([](auto const& l) { return l + astype<float>(lax::axis_index("dp")); }, mesh, {P(None, "mp")},
                       P(None, "mp"));
    REQUIRE_THROWS_WITH(i(x), ContainsSubstring("replicates it along mesh axis 'dp', but its blocks differ along 'dp'"));
  }
}

TEST_CASE("shard_map and the collectives refuse bad input with messages", "[shard_map]") {
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  auto x = device_put(random::normal(PRNGKey(8), {8, 12}), NamedSharding(mesh, P("dp", None)));
  auto before = x.to_host();
  auto run = [&](auto body, PartitionSpec in = P("dp", None), PartitionSpec out = P("dp", None)) {
    return Tensor<float>(shard_map(body, mesh, {in}, out)(x));
  };
  REQUIRE_THROWS_WITH(Tensor<float>(lax::psum(x, "mp")),
                      ContainsSubstring("lax::psum: axis name 'mp' is not bound: explicit collectives run inside "
                                        "shard_map"));
  REQUIRE_THROWS_WITH(run([](auto const& l) { return lax::psum(l, "tp"); }),
                      ContainsSubstring("lax::psum: the shard_map's mesh ('dp': 2, 'mp': 4) has no axis 'tp'"));
  REQUIRE_THROWS_WITH(run([](auto const& l) { return lax::psum(l, {"mp", "mp"}); }),
                      ContainsSubstring("lax::psum: mesh axis 'mp' is named twice"));
  REQUIRE_THROWS_WITH(run([](auto const& l) { return lax::ppermute(l, "mp", {{0, 1}, {2, 1}}); }),
                      ContainsSubstring("lax::ppermute: perm is not a permutation: member 1 is the target of (0, 1) and "
                                        "(2, 1)"));
  REQUIRE_THROWS_WITH(run([](auto const& l) { return lax::ppermute(l, "mp", {{0, 1}, {0, 2}}); }),
                      ContainsSubstring("member 0 is the source of (0, 1) and (0, 2)"));
  REQUIRE_THROWS_WITH(run([](auto const& l) { return lax::ppermute(l, "mp", {{0, 4}}); }),
                      ContainsSubstring("perm pair (0, 4) names member 4, but mesh axes ('mp',) have 4 devices"));
  REQUIRE_THROWS_WITH(
      run([](auto const& l) { return lax::psum_scatter(l, {"dp", "mp"}, {.scatter_dimension = 0, .tiled = true}); }),
      ContainsSubstring("lax::psum_scatter: scatter_dimension 0 of the operand of shape (4, 12) has size 4, not "
                        "divisible by the 8 devices of mesh axes ('dp', 'mp')"));
  REQUIRE_THROWS_WITH(run([](auto const& l) { return lax::psum_scatter(l, "mp", {.scatter_dimension = 1}); }),
                      ContainsSubstring("has size 12, but without tiled it must equal the 4 devices of mesh axes "
                                        "('mp',)"));
  REQUIRE_THROWS_WITH(run([](auto const& l) { return lax::all_to_all(l, "mp", 2, 0, true); }),
                      ContainsSubstring("lax::all_to_all: split_axis 2 is out of range for an operand of shape (4, 12)"));
  REQUIRE_THROWS_WITH(run([](auto const& l) { return lax::all_gather(l, "mp", {.axis = 3}); }),
                      ContainsSubstring("lax::all_gather: axis 3 is out of range for an operand of shape (4, 12) (rank "
                                        "2, plus the new dimension)"));
  // A spec that does not tile its argument, or names an axis the mesh lacks: device_put's messages.
  REQUIRE_THROWS_WITH(run([](auto const& l) { return l; }, P(None, {"dp", "mp"}), P(None, {"dp", "mp"})),
                      ContainsSubstring("12"));
  REQUIRE_THROWS_WITH(run([](auto const& l) { return l; }, P("tp", None)), ContainsSubstring("'tp'"));
  // out_specs longer than the result's rank.
  REQUIRE_THROWS_WITH(run([](auto const& l) { return sum(l, 1); }, P("dp", None), P("dp", None)),
                      ContainsSubstring("out_specs P('dp', None) for result 0 has 2 entries, but the body's result has "
                                        "shape (4,) (rank 1)"));
  // Arity.
  REQUIRE_THROWS_WITH((shard_map([](auto const& l, auto const&) { return l; }, mesh, {P("dp")}, P("dp"))(x, x)),
                      ContainsSubstring("shard_map: 1 in_specs for 2 arguments; give one per argument"));
  REQUIRE_THROWS_WITH(
      (shard_map([](auto const& l) { return std::make_tuple(l, l); }, mesh, {P("dp")}, P("dp"))(x)),
      ContainsSubstring("shard_map: 1 out_specs for 2 results; give one per result"));
  // A sharded tensor captured by the body rather than passed.
  auto w = device_put(random::normal(PRNGKey(9), {4, 12}), NamedSharding(mesh, P(None, "mp")));
  REQUIRE_THROWS_WITH(run([&](auto const& l) { return l + w; }),
                      ContainsSubstring("shard_map: the body uses a float32[4,12] tensor sharded P(None, 'mp')"));
  // Reading or resharding a block inside the body; a per-device value with a requested sharding.
  REQUIRE_THROWS_WITH(run([](auto const& l) { return device_put(l, NamedSharding(make_mesh({8}, {"z"}), P())); }),
                      ContainsSubstring("device_put: a per-device value inside shard_map"));
  REQUIRE_THROWS_WITH(run([](auto const& l) {
                        (void)l.to_host();
                        return l;
                      }),
                      ContainsSubstring("to_host: inside shard_map this (4, 12) tensor is one block per device, "
                                        "differing along mesh axes 'dp'"));
  REQUIRE_THROWS_WITH(run([&](auto const& l) { return eval(l * 2.0f, NamedSharding(mesh, P("dp"))); }),
                      ContainsSubstring("eval: a per-device value inside shard_map (its blocks differ along mesh axes "
                                        "'dp') cannot be given the sharding"));
  // Nested shard_map.
  REQUIRE_THROWS_WITH(run([&](auto const& l) { return shard_map([](auto const& y) { return y; }, mesh, {P()}, P())(l); }),
                      ContainsSubstring("regions do not nest"));
  // Nothing changed, and a shard_map still runs after every failure.
  REQUIRE(x.to_host() == before);
  REQUIRE(run([](auto const& l) { return l; }).to_host() == before);
}
