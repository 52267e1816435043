// A recorded program replayed as one captured graph (runtime/program_graph.hpp, runtime/capture.hpp).
// On a host, graphs record the host queues' items (TESSEL_ASYNC=1) and queue them again on each
// launch, with the same addresses, as a GPU graph does: so these tests see what a graph must hold
// (its own buffers, a copy of an argument that changes, results copied out) and what breaks a
// capture. The cases tagged [.graphs] run in the asynchronous mode (runtime.async_graphs in CTest).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <string>
#include <vector>

#include "support/close.hpp"
#include "support/data.hpp"
#include "support/meshes.hpp"
#include "support/two_blocks.hpp"
#include "tessel/tessel.hpp"
#include "tessel/runtime/capture.hpp"
#include "tessel/runtime/stream.hpp"
#include "tessel/tools/profile.hpp"

using namespace tessel;
using test::draw;
using test::JittedTwoBlocks;
using test::TwoBlocks;
using Catch::Matchers::ContainsSubstring;

namespace {

// Host graphs on for one test case.
struct HostGraphs {
  HostGraphs() { detail::use_host_graphs_for_test(true); }
  ~HostGraphs() { detail::use_host_graphs_for_test(false); }
  HostGraphs(HostGraphs const&) = delete;
  HostGraphs& operator=(HostGraphs const&) = delete;
};

std::uint64_t graph_launches() { return detail::ordering_counts().graph_launches.load(); }

}  // namespace

TEST_CASE("a replayed program is one graph launch, with the bits of the body", "[.graphs]") {
  HostGraphs on;
  REQUIRE(detail::graphs_unavailable().empty());
  for (auto const& mesh : test::all_meshes()) {
    CAPTURE(to_string(mesh));
    AxisName const a = mesh.axes().name(0);
    NamedSharding rows(mesh, P(a)), whole(mesh, P()), cols(mesh, P(None, a));
    int runs = 0;
    TwoBlocks body{&runs, cols};
    auto f = jit(body);
    auto x = draw({16, 8}, rows, 1), w1 = draw({8, 12}, whole, 2), w2 = draw({12, 8}, cols, 3);
    auto expected = body(x, w1, w2, 0.5f).to_host();
    (void)f(x, w1, w2, 0.5f);  // recorded
    REQUIRE(runs == 2);
    auto launches_of = [&] {
      auto const before = detail::ordering_counts().launches.load();
      auto y = f(x, w1, w2, 0.5f);
      CHECK(test::bitwise_equal(y.to_host(), expected));
      return detail::ordering_counts().launches.load() - before;
    };
    detail::use_host_graphs_for_test(false);
    auto const step_by_step = launches_of();
    CHECK_THAT(f.explain(x, w1, w2, 0.5f), ContainsSubstring("replayed step by step: a host replays programs"));
    detail::use_host_graphs_for_test(true);
    for (int call = 0; call < 3; ++call) {  // captured, then replayed twice
      auto const graphs = graph_launches();
      auto const launches = launches_of();
      CHECK(graph_launches() == graphs + 1);
      // The steps' launches are the graph's: what is new is a copy of each result shard (and with
      // TESSEL_CHECK_POOL_ORDER, the poison of its buffer).
      if (call > 0) {
        CHECK(launches <= 2 * static_cast<std::uint64_t>(mesh.num_devices()));
        CHECK(launches < step_by_step);
      }
      CHECK(runs == 2);
    }
    CHECK_THAT(f.explain(x, w1, w2, 0.5f), ContainsSubstring("replayed as one graph: 1 capture, 3 launches"));
  }
}

TEST_CASE("an argument passed anew is copied into the graph's own buffer after one more capture", "[.graphs]") {
  HostGraphs on;
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  NamedSharding rows(mesh, P("dp")), whole(mesh, P()), cols(mesh, P(None, "mp"));
  int runs = 0;
  TwoBlocks body{&runs, cols};
  auto f = jit(body);
  auto w1 = draw({8, 12}, whole, 2), w2 = draw({12, 8}, cols, 3);
  std::vector<Tensor<float>> xs;
  for (std::uint32_t k = 0; k < 5; ++k) xs.push_back(draw({16, 8}, rows, 10 + k));
  (void)f(xs[0], w1, w2, 0.5f);
  (void)f(xs[0], w1, w2, 0.5f);  // captured, reading x in place
  CHECK_THAT(f.explain(xs[0], w1, w2, 0.5f), ContainsSubstring("1 capture, 1 launch\n"));
  std::vector<Tensor<float>> got;
  for (std::size_t k = 1; k < xs.size(); ++k) got.push_back(f(xs[k], w1, w2, 0.5f));
  // x changed once: captured again, x now copied into the graph's slot; the weights stay in place.
  CHECK_THAT(f.explain(xs[0], w1, w2, 0.5f), ContainsSubstring("2 captures, 5 launches"));
  // Each call's result is its own: the later calls did not overwrite the earlier ones.
  for (std::size_t k = 1; k < xs.size(); ++k)
    CHECK(test::bitwise_equal(got[k - 1].to_host(), body(xs[k], w1, w2, 0.5f).to_host()));
  // And the first x, now read through the slot too.
  CHECK(test::bitwise_equal(f(xs[0], w1, w2, 0.5f).to_host(), body(xs[0], w1, w2, 0.5f).to_host()));
  CHECK_THAT(f.explain(xs[0], w1, w2, 0.5f), ContainsSubstring("2 captures, 6 launches"));
}

TEST_CASE("a graph's program returns its arguments themselves, and several results each copied out", "[.graphs]") {
  HostGraphs on;
  auto mesh = make_mesh({4, 2}, {"a", "b"});
  NamedSharding rows(mesh, P("a")), whole(mesh, P());
  auto f = jit([](Tensor<float> const& a, Tensor<float> const& b) {
    Tensor<float> s = exp(a) + b;
    return std::tuple{s, sum(s * a, 1), b};
  });
  auto a = draw({8, 6}, rows, 1), b = draw({8, 6}, whole, 2);
  (void)f(a, b);
  for (int call = 0; call < 2; ++call) {
    auto [s, t, same_b] = f(a, b);
    CHECK(test::bitwise_equal(s.to_host(), Tensor<float>(exp(a) + b).to_host()));
    CHECK(test::bitwise_equal(t.to_host(), eval(sum(Tensor<float>(exp(a) + b) * a, 1)).to_host()));
    CHECK(same_b.impl_ptr() == b.impl_ptr());  // an argument returned is the argument
  }
  CHECK_THAT(f.explain(a, b), ContainsSubstring("replayed as one graph: 1 capture, 2 launches"));
}

TEST_CASE("a host wait inside a capture breaks it: no graph, and why", "[.graphs]") {
  HostGraphs on;
  int const ids[] = {0, 1, 2};
  auto x = draw({16, 8}, NamedSharding(make_mesh({8}, {"x"}), P("x")), 1);
  detail::begin_capture(ids);
  CHECK(detail::capture_number() != 0);
  CHECK_FALSE(detail::capture_broken());
  detail::fence_devices(std::span<int const>(ids, 2));
  CHECK(detail::capture_broken());
  detail::CapturedGraph graph = detail::end_capture();
  CHECK(detail::capture_number() == 0);
  CHECK(graph.native == nullptr);
  CHECK(graph.broken == "a host wait for devices 0, 1 inside a step (it reads device memory on the host, or sends it "
                        "between processes)");
  CHECK_THROWS_WITH(detail::launch_graph(graph), ContainsSubstring("launch_graph: the capture made no graph (a host wait"));
  // After it, work runs again as it is queued.
  CHECK(test::bitwise_equal(Tensor<float>(x * 2.0f).to_host(), Tensor<float>(x + x).to_host()));
}

TEST_CASE("a program watched step by step (a trace or profile) runs without its graph, and uses it after",
          "[.graphs]") {
  HostGraphs on;
  JittedTwoBlocks f(make_mesh({8}, {"x"}));
  (void)f();
  (void)f();
  auto const profiled = profile(f.f, f.x, f.w1, f.w2, 1.0f);
  CHECK(profiled.rows.size() > 1);  // each step of the program, timed
  CHECK_THAT(f.explain(), ContainsSubstring("replayed step by step: a trace or profile watches each step"));
  (void)f();
  CHECK_THAT(f.explain(), ContainsSubstring("replayed as one graph: 1 capture, 2 launches"));
}

TEST_CASE("use_graphs(false) replays step by step, and the graph is used again after use_graphs(true)", "[.graphs]") {
  HostGraphs on;
  JittedTwoBlocks f(make_mesh({2, 4}, {"a", "b"}));
  auto const expected = f.body(f.x, f.w1, f.w2, 1.0f).to_host();
  (void)f();
  (void)f();
  use_graphs(false);
  auto const launches = graph_launches();
  CHECK(test::bitwise_equal(f().to_host(), expected));
  CHECK(graph_launches() == launches);
  CHECK_THAT(f.explain(), ContainsSubstring("replayed step by step: graphs are off (TESSEL_GRAPHS=0, or use_graphs(false))"));
  use_graphs(true);
  CHECK(test::bitwise_equal(f().to_host(), expected));
  CHECK(graph_launches() == launches + 1);
  CHECK_THAT(f.explain(), ContainsSubstring("replayed as one graph: 1 capture, 2 launches"));
}

TEST_CASE("without graphs a program replays step by step, and explain says why", "[runtime][jit][program][graph]") {
  if (!detail::graphs_unavailable().empty()) {
    JittedTwoBlocks f(make_mesh({8}, {"x"}));
    (void)f();
    CHECK_THAT(f.explain(), !ContainsSubstring("replayed"));  // (not replayed yet)
    (void)f();
    CHECK_THAT(f.explain(), ContainsSubstring("replayed step by step: " + std::string(detail::graphs_unavailable())));
  }
  // On a host, graphs are asked for; without the host queues they cannot record.
  detail::use_host_graphs_for_test(true);
  if (!detail::host_queues_active())
    CHECK(detail::graphs_unavailable() == "host graphs record the host queues, which TESSEL_ASYNC=1 starts");
  detail::use_host_graphs_for_test(false);
  if (std::string(platform_name()) == "cpu")
    CHECK(detail::graphs_unavailable() ==
          "a host replays programs step by step (TESSEL_HOST_GRAPHS=1 records graphs, for tests)");
}
