// Reshard classification (plan/reshard.hpp), its cost, and the steps explain prints.
#include <catch2/catch_test_macros.hpp>
#include <algorithm>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "support/data.hpp"
#include "support/meshes.hpp"
#include "tessel/plan/graph.hpp"
#include "tessel/plan/plan.hpp"
#include "tessel/plan/reshard.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace tessel;

namespace {

std::string kinds(Mesh const& mesh, Shape const& shape, PartitionSpec const& from, PartitionSpec const& to) {
  auto steps = plan::decompose(shape, 4, NamedSharding(mesh, from), NamedSharding(mesh, to));
  return plan::to_string(steps);
}

std::string kinds(NamedSharding const& from, NamedSharding const& to, Shape const& shape) {
  return plan::to_string(plan::decompose(shape, 4, from, to));
}

// The same classification at compile time, from constant layouts.
constexpr MeshAxes grid({2, 4}, {"a", "b"});
constexpr auto gather_steps = plan::decompose(ShardLayout(grid, P("a", "b")), ShardLayout(grid, P("a")), Shape{8, 8});
static_assert(gather_steps.size() == 1 && gather_steps[0].collective == plan::Collective::all_gather);
static_assert(gather_steps[0].axes.size() == 1 && gather_steps[0].axes[0] == 1);
constexpr auto move_steps = plan::decompose(ShardLayout(grid, P("a")), ShardLayout(grid, P(None, "a")), Shape{8, 8});
static_assert(move_steps.size() == 1 && move_steps[0].collective == plan::Collective::all_to_all);
constexpr auto exchange = plan::decompose(ShardLayout(grid, P("a")), ShardLayout(grid, P("b")), Shape{8, 8});
static_assert(exchange.size() == 1 && exchange[0].collective == plan::Collective::all_to_all &&
              exchange[0].axes.size() == 1 && exchange[0].axes[0] == 0);
constexpr auto two_steps = plan::decompose(ShardLayout(grid, P("a", None)), ShardLayout(grid, P(None, "b")), Shape{8, 8});
static_assert(two_steps.size() == 2 && two_steps[0].collective == std::nullopt &&
              two_steps[1].collective == plan::Collective::all_gather);
static_assert(plan::decompose(ShardLayout(grid, P("a")), ShardLayout(grid, P("a", None)), Shape{8, 8}).empty());

}  // namespace

TEST_CASE("sharding changes on a 1-D mesh are classified", "[plan][reshard]") {
  auto m = make_mesh({8}, {"x"});
  Shape s{16, 16};
  CHECK(kinds(m, s, P("x"), P("x", None)) == "none");
  CHECK(kinds(m, s, P("x"), P()) == "all-gather over ('x')");
  CHECK(kinds(m, s, P(), P(None, "x")) == "local slice over ('x')");
  CHECK(kinds(m, s, P("x"), P(None, "x")) == "all-to-all over ('x')");
  CHECK(kinds(m, s, P(None, "x"), P("x")) == "all-to-all over ('x')");
}

TEST_CASE("sharding changes on 2x4 and 4x2 meshes are classified", "[plan][reshard]") {
  for (auto const& m : {make_mesh({2, 4}, {"a", "b"}), make_mesh({4, 2}, {"a", "b"})}) {
    INFO(to_string(m));
    Shape s{16, 16};
    CHECK(kinds(m, s, P("a", "b"), P("a")) == "all-gather over ('b')");
    CHECK(kinds(m, s, P("a", "b"), P()) == "all-gather over ('a', 'b')");
    CHECK(kinds(m, s, P({"a", "b"}), P("a")) == "all-gather over ('b')");
    CHECK(kinds(m, s, P("a"), P("a", "b")) == "local slice over ('b')");
    CHECK(kinds(m, s, P(), P({"b", "a"})) == "local slice over ('a', 'b')");
    CHECK(kinds(m, s, P({"a", "b"}), P("a", "b")) == "all-to-all over ('b')");
    CHECK(kinds(m, s, P("a", "b"), P("b", "a")) == "all-to-all over ('a', 'b')");  // blocks change shape
    // Same block shape, the blocks dealt out in another order: a permutation of the devices' blocks.
    CHECK(kinds(m, s, P({"a", "b"}), P({"b", "a"})) == "collective-permute over ('a', 'b')");
    // A dimension that loses one axis and gains another is one exchange over the axes it loses
    // (each device receives only its new block); otherwise the slice goes first, so that the
    // gather moves less.
    CHECK(kinds(m, s, P("a"), P("b")) == "all-to-all over ('a')");
    CHECK(kinds(m, s, P("a", None), P(None, "b")) == "local slice over ('b') + all-gather over ('a')");
    CHECK(kinds(m, s, P({"a", "b"}), P("b")) == "all-to-all over ('a', 'b')");
  }
}

TEST_CASE("sharding changes on a 2x2x2 mesh and a non-square scrambled mesh are classified", "[plan][reshard]") {
  auto cube = make_mesh({2, 2, 2}, {"a", "b", "c"});
  Shape s{8, 8, 8};
  CHECK(kinds(cube, s, P("a", "b", "c"), P("c", "b", "a")) == "collective-permute over ('a', 'c')");
  CHECK(kinds(cube, s, P({"a", "b"}), P("a", "b")) == "all-to-all over ('b')");
  CHECK(kinds(cube, s, P("a", "b", "c"), P()) == "all-gather over ('a', 'b', 'c')");
  CHECK(kinds(cube, s, P(), P(None, {"c", "a"})) == "local slice over ('a', 'c')");
  CHECK(kinds(cube, s, P("a", "b"), P("a", "b", "c")) == "local slice over ('c')");
  CHECK(kinds(cube, s, P("a", None, "c"), P(None, "a", "c")) == "all-to-all over ('a')");

  auto odd = make_mesh({3, 2}, {"a", "b"}, {5, 0, 3, 1, 7, 2});
  Shape t{12, 6};
  CHECK(kinds(odd, t, P("a", "b"), P("b", "a")) == "all-to-all over ('a', 'b')");
  CHECK(kinds(odd, t, P("a"), P()) == "all-gather over ('a')");
  CHECK(kinds(odd, t, P("a"), P("a", "b")) == "local slice over ('b')");
  CHECK(kinds(odd, t, P("b"), P("a")) == "all-to-all over ('b')");
  // Equal blocks that some group member holds: a permute (P('a') -> P('b') on a 2x2x2 mesh), and
  // an axis moved to another dimension with another gathered is one exchange.
  CHECK(kinds(cube, s, P("a"), P("b")) == "collective-permute over ('a')");
  CHECK(kinds(cube, s, P(None, None, "a"), P("b", "a")) == "all-to-all over ('a')");
  CHECK(kinds(cube, s, P("a", "b"), P(None, "a")) == "all-to-all over ('a', 'b')");
}

TEST_CASE("sharding changes between meshes are classified by the blocks each device holds", "[plan][reshard]") {
  Shape s{64, 16};
  auto flat = make_mesh({8}, {"data"});
  auto grid = make_mesh({4, 2}, {"dp", "mp"});
  auto reversed = make_mesh({8}, {"data"}, {7, 6, 5, 4, 3, 2, 1, 0});
  CHECK(kinds(NamedSharding(flat, P("data")), NamedSharding(grid, P({"dp", "mp"})), s) == "none");
  CHECK(kinds(NamedSharding(flat, P("data")), NamedSharding(reversed, P("data")), s) ==
        "collective-permute over all devices");
  CHECK(kinds(NamedSharding(make_mesh({2, 4}, {"a", "b"}), P("a")), NamedSharding(grid, P("dp")), s) ==
        "local slice");
  CHECK(kinds(NamedSharding(flat, P("data")), NamedSharding(grid, P("mp", "dp")), s) == "copy between meshes");
  auto one = NamedSharding(make_mesh({1}, {"device"}, {0}), P());
  CHECK(kinds(one, NamedSharding(flat, P("data")), s) == "copy between meshes");
}

TEST_CASE("size-1 mesh axes split nothing: no step names them, equal tilings need none", "[plan][reshard]") {
  auto m = make_mesh({1, 8}, {"a", "b"});
  Shape s{16, 16};
  CHECK(kinds(m, s, P(None, {"a", "b"}), P(None, "b")) == "none");
  CHECK(kinds(m, s, P("a", "b"), P(None, "b")) == "none");
  CHECK(kinds(m, s, P("a"), P()) == "none");
  CHECK(kinds(m, s, P({"a", "b"}), P()) == "all-gather over ('b')");
  CHECK(kinds(m, s, P("a", "b"), P("b", "a")) == "all-to-all over ('b')");
  CHECK(kinds(m, s, P(), P(None, {"b", "a"})) == "local slice over ('b')");
  auto tall = make_mesh({8, 1}, {"a", "b"});
  CHECK(kinds(tall, s, P({"a", "b"}), P("a", "b")) == "none");
  CHECK(kinds(tall, s, P("b", "a"), P("a")) == "all-to-all over ('a')");
  // Also at compile time.
  constexpr MeshAxes flat({1, 8}, {"a", "b"});
  static_assert(plan::decompose(ShardLayout(flat, P(None, {"a", "b"})), ShardLayout(flat, P(None, "b")), Shape{8, 8}).empty());
}

TEST_CASE("every classified step is a legal change of one kind", "[plan][reshard][property]") {
  // For every pair of specs: gathers only remove axes, slices only add them, and the steps chain
  // from the source to the target.
  for (auto const& mesh : test::all_meshes()) {
    Shape s{24, 48};
    auto specs = test::all_specs(mesh.axes(), 2);
    for (auto const& a : specs)
      for (auto const& b : specs) {
        NamedSharding from(mesh, a), to(mesh, b);
        auto steps = plan::decompose(s, 4, from, to);
        INFO(to_string(mesh) << " " << to_string(a) << " -> " << to_string(b) << ": " << plan::to_string(steps));
        REQUIRE(steps.size() <= 2);
        // Equal tilings (size-1 mesh axes aside) need no step.
        REQUIRE(steps.empty() == plan::same_tiling(from.layout(), to.layout(), s.size()));
        if (steps.empty()) continue;
        REQUIRE(steps.front().from == from);
        REQUIRE(steps.back().to == to);
        if (steps.size() == 2) REQUIRE(steps[0].to == steps[1].from);
        for (auto const& step : steps) {
          for (int p = 0; p < mesh.num_devices(); ++p) {
            Box have = step.from.layout().box(s, p), want = step.to.layout().box(s, p);
            auto inside = intersect(want, have).num_elements() == want.num_elements();
            if (step.collective == std::nullopt) REQUIRE(inside);
            if (step.collective == plan::Collective::all_gather) REQUIRE(intersect(want, have) == have);
            if (step.collective == plan::Collective::collective_permute) REQUIRE(want.num_elements() == have.num_elements());
            if (step.collective == plan::Collective::all_to_all) {
              // The new block is assembled from its group's blocks (devices that differ only on the
              // step's axes), each element from exactly one of them (runtime/collectives.hpp).
              auto cp = mesh.axes().coords(p);
              std::int64_t covered = 0;
              for (int q = 0; q < mesh.num_devices(); ++q) {
                auto cq = mesh.axes().coords(q);
                bool same_group = true;
                for (std::size_t a = 0; a < mesh.num_axes(); ++a)
                  if (cp[a] != cq[a] && std::find(step.axes.begin(), step.axes.end(), a) == step.axes.end())
                    same_group = false;
                if (same_group) covered += intersect(want, step.from.layout().box(s, q)).num_elements();
              }
              REQUIRE(covered == want.num_elements());
            }
          }
        }
      }
  }
}

TEST_CASE("the cost model prices each collective with its ring formula", "[plan][cost]") {
  plan::CostModel m;
  m.all_gather = {2.0, 1.0};  // 2 us per step, 1 GB/s = 1000 bytes per us
  m.all_to_all = {3.0, 2.0};
  m.collective_permute = {7.0, 4.0};
  m.all_reduce = {1.0, 1.0};
  CHECK(m.all_gather_us(8000, 4) == 3 * 2.0 + 0.75 * 8000 / 1000);
  CHECK(m.all_to_all_us(8000, 4) == 3 * 3.0 + 0.75 * 8000 / 2000);
  CHECK(m.collective_permute_us(8000) == 7.0 + 8000.0 / 4000);
  CHECK(m.all_reduce_us(8000, 4) == 6 * 1.0 + 1.5 * 8000 / 1000);
  CHECK(m.all_gather_us(8000, 1) == 0);
  CHECK(m.local_copy_us(1e9) == 0);  // free until calibrated

  auto mesh = make_mesh({2, 4}, {"a", "b"});
  Shape s{16, 16};
  auto steps = plan::decompose(s, 4, NamedSharding(mesh, P("a", None)), NamedSharding(mesh, P(None, "b")));
  REQUIRE(steps.size() == 2);
  CHECK(steps[0].group == 1);
  CHECK(steps[0].bytes == 8 * 4 * 4);   // the block kept
  CHECK(steps[1].group == 2);
  CHECK(steps[1].bytes == 16 * 4 * 4);  // the gathered block
  CHECK(m.reshard_us(steps) == m.all_gather_us(16 * 4 * 4, 2));
  auto exchange = plan::decompose(s, 4, NamedSharding(mesh, P("a")), NamedSharding(mesh, P("b")));
  REQUIRE(exchange.size() == 1);
  CHECK(exchange[0].group == 2);
  CHECK(exchange[0].bytes == 4 * 16 * 4);  // the new block
  CHECK(m.reshard_us(exchange) == m.all_to_all_us(4 * 16 * 4, 2));
}

TEST_CASE("explain prints each collective of a reshard on its own line and plans count them", "[plan][explain]") {
  SECTION("an axis moving between dimensions: one all-to-all") {
    auto mesh = make_mesh({8}, {"x"});
    auto a = device_put(test::iota_data<float>(Shape{64, 64}), Shape{64, 64}, NamedSharding(mesh, P("x")));
    auto b = device_put(test::iota_data<float>(Shape{64, 64}, 1.0f), Shape{64, 64}, NamedSharding(mesh, P(None, "x")));
    auto const& p = plan_of(a + b);
    INFO(explain(a + b));
    CHECK(p.count(plan::Collective::all_to_all) == 1);
    CHECK(p.count(plan::StepKind::reshard) == 0);
    CHECK_THAT(explain(a + b), ContainsSubstring("all-to-all over ('x') (groups of 8): operand float32[64,64]"));
    CHECK_THAT(explain(a + b), ContainsSubstring("P(None, 'x') -> P('x'): 2048 bytes per device, est 35.2 us (tensor)"));
    auto before = execution_counts();
    Tensor<float> c = a + b;
    CHECK(execution_counts()[plan::Collective::all_to_all] == before[plan::Collective::all_to_all] + 1);
    CHECK(execution_counts().reshards == before.reshards + 1);
    auto want = test::iota_data<float>(Shape{64, 64});
    auto other = test::iota_data<float>(Shape{64, 64}, 1.0f);
    for (std::size_t i = 0; i < want.size(); ++i) want[i] += other[i];
    CHECK(test::bitwise_equal(c.to_host(), want));
  }
  SECTION("blocks dealt out in another order: one collective-permute") {
    auto mesh = make_mesh({2, 4}, {"a", "b"});
    auto a = device_put(test::iota_data<float>(Shape{64, 8}), Shape{64, 8}, NamedSharding(mesh, P({"a", "b"})));
    auto b = device_put(test::iota_data<float>(Shape{64, 8}, 2.0f), Shape{64, 8}, NamedSharding(mesh, P({"b", "a"})));
    auto const& p = plan_of(a * b);
    INFO(explain(a * b));
    CHECK(p.count(plan::Collective::collective_permute) == 1);
    CHECK_THAT(explain(a * b), ContainsSubstring("collective-permute over ('a', 'b') (groups of 8)"));
    auto before = execution_counts();
    Tensor<float> c = a * b;
    CHECK(execution_counts()[plan::Collective::collective_permute] == before[plan::Collective::collective_permute] + 1);
    auto x = test::iota_data<float>(Shape{64, 8}), y = test::iota_data<float>(Shape{64, 8}, 2.0f);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] *= y[i];
    CHECK(test::bitwise_equal(c.to_host(), x));
  }
  SECTION("a requested output that drops an axis and adds another: one all-to-all of the new blocks") {
    auto mesh = make_mesh({2, 4}, {"a", "b"});
    auto a = device_put(test::iota_data<float>(Shape{16, 16}), Shape{16, 16}, NamedSharding(mesh, P("a")));
    auto e = with_sharding_constraint(a * 2.0f, NamedSharding(mesh, P("b")));
    auto const& p = plan_of(e);
    INFO(explain(e));
    CHECK(p.count(plan::Collective::all_to_all) == 1);
    CHECK(p.count(plan::Collective::all_gather) == 0);
    CHECK(p.count(plan::StepKind::reshard) == 0);
    CHECK_THAT(explain(e), ContainsSubstring("all-to-all over ('a') (groups of 2): operand float32[16,16] P('a') -> P('b'): "
                                             "256 bytes per device"));
    auto before = execution_counts();
    Tensor<float> y = e;
    CHECK(execution_counts()[plan::Collective::all_to_all] == before[plan::Collective::all_to_all] + 1);
    CHECK(execution_counts().reshards == before.reshards + 1);
    auto want = test::iota_data<float>(Shape{16, 16});
    for (auto& v : want) v *= 2.0f;
    CHECK(test::bitwise_equal(y.to_host(), want));
    CHECK(y.sharding() == NamedSharding(mesh, P("b")));
  }
  SECTION("a gather that a slice first makes smaller: local slice, then all-gather") {
    auto mesh = make_mesh({2, 4}, {"a", "b"});
    auto a = device_put(test::iota_data<float>(Shape{16, 16}), Shape{16, 16}, NamedSharding(mesh, P("a")));
    auto e = with_sharding_constraint(a * 2.0f, NamedSharding(mesh, P(None, "b")));
    auto const& p = plan_of(e);
    INFO(explain(e));
    CHECK(p.count(plan::Collective::all_gather) == 1);
    CHECK(p.count(plan::StepKind::reshard) == 1);
    CHECK_THAT(explain(e), ContainsSubstring("P('a') -> P('a', 'b') (local slice over ('b')): 0 bytes cross devices"));
    CHECK_THAT(explain(e), ContainsSubstring("all-gather over ('a') (groups of 2): operand float32[16,16] P('a', 'b') -> P(None, 'b')"));
    auto before = execution_counts();
    Tensor<float> y = e;
    // Each step of the composition runs as the plan lists it: the all-gather as one collective.
    CHECK(execution_counts()[plan::Collective::all_gather] == before[plan::Collective::all_gather] + 1);
    CHECK(execution_counts().reshards == before.reshards + 1);
    auto want = test::iota_data<float>(Shape{16, 16});
    for (auto& v : want) v *= 2.0f;
    CHECK(test::bitwise_equal(y.to_host(), want));
  }
}

namespace {
// A Megatron-like second dot: activations split over dp, the weight's rows (the contracting
// dimension) over mp. Either the weight is gathered over mp (no collective after the dot) or the
// activations are sliced locally and the output all-reduced over mp.
plan::Plan megatron_plan(plan::CostModel const& model) {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  auto x = random::normal(PRNGKey(1), {64, 4096}, NamedSharding(mesh, P("dp", None)));
  auto w = random::normal(PRNGKey(2), {4096, 128}, NamedSharding(mesh, P("mp", None)));
  plan::Graph g;
  plan::describe(matmul(x, w), g);
  return plan::make_plan(std::move(g), std::nullopt, model);
}
}  // namespace

TEST_CASE("the cost model chooses between gathering a weight and all-reducing the output", "[plan][cost][dot]") {
  plan::CostModel model;  // the defaults: a 2 MB weight costs more to gather than 8 KB to all-reduce
  auto p = megatron_plan(model);
  INFO(plan::to_string(p));
  CHECK(p.count(plan::Collective::all_reduce) == 1);
  CHECK(p.count(plan::Collective::all_gather) == 0);
  CHECK_THAT(plan::to_string(p), ContainsSubstring("local slice over ('mp')"));

  model.all_reduce.latency_us = 1000;  // an all-reduce that costs a millisecond per step
  auto q = megatron_plan(model);
  INFO(plan::to_string(q));
  CHECK(q.count(plan::Collective::all_reduce) == 0);
  CHECK(q.count(plan::Collective::all_gather) == 1);
  CHECK_THAT(plan::to_string(q), ContainsSubstring("all-gather over ('mp') (groups of 2): operand float32[4096,128]"));
}

TEST_CASE("a changed cost model re-plans instead of reusing the cached choice", "[plan][cost][cache]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  auto x = random::normal(PRNGKey(1), {64, 4096}, NamedSharding(mesh, P("dp", None)));
  auto w = random::normal(PRNGKey(2), {4096, 128}, NamedSharding(mesh, P("mp", None)));
  auto& model = plan::cost_model();
  plan::CostModel saved = model;
  CHECK(plan_of(matmul(x, w)).count(plan::Collective::all_reduce) == 1);
  auto plans = plan::cached_plans();
  model.all_reduce.latency_us = 1000;
  auto const& q = plan_of(matmul(x, w));
  CHECK(plan::cached_plans() == plans + 1);
  CHECK(q.count(plan::Collective::all_gather) == 1);
  Tensor<float> gathered = matmul(x, w);
  model = saved;
  CHECK(plan_of(matmul(x, w)).count(plan::Collective::all_reduce) == 1);
  CHECK(plan::cached_plans() == plans + 1);  // the first plan again, from the cache
  Tensor<float> reduced = matmul(x, w);
  auto a = gathered.to_host(), b = reduced.to_host();
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) REQUIRE(std::abs(a[i] - b[i]) <= 1e-3f * (1 + std::abs(b[i])));
}
