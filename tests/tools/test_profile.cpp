// tessel::profile (tools/profile.hpp): one row per instruction of the call, in plan order, each
// measured (> 0) beside the estimate explain prints; a trace that is on records the call too.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "support/data.hpp"
#include "tessel/tessel.hpp"
#include "tessel/plan/cost_analysis.hpp"
#include "tessel/tools/profile.hpp"
#include "tessel/tools/trace.hpp"

using namespace tessel;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("profile times each instruction of a jitted call beside its estimate", "[tools][profile]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  auto x = device_put(test::iota_data<float>(Shape{64, 32}), Shape{64, 32}, NamedSharding(mesh, P("dp", None)));
  auto w1 = device_put(test::iota_data<float>(Shape{32, 128}), Shape{32, 128}, NamedSharding(mesh, P(None, "mp")));
  auto w2 = device_put(test::iota_data<float>(Shape{128, 32}), Shape{128, 32}, NamedSharding(mesh, P("mp", None)));
  auto mlp = jit([](auto const& x, auto const& w1, auto const& w2) { return matmul(relu(x.matmul(w1)), w2); });
  (void)mlp(x, w1, w2);
  auto const& plan = mlp.plan(x, w1, w2);
  auto costs = plan::cost_analysis(plan);

  Profile p = profile(mlp, x, w1, w2);
  INFO(to_string(p));
  REQUIRE(p.rows.size() == plan.steps.size());
  for (std::size_t k = 0; k < p.rows.size(); ++k) {
    auto const& r = p.rows[k];
    CHECK(r.step == k);
    CHECK(r.label == plan.steps[k].label);
    CHECK(r.kind == costs[k].kind);
    CHECK(r.measured_us > 0);
    CHECK(r.estimate_us == costs[k].estimate_us);  // explain's estimate
    if (r.kind == "gemm" || r.kind == "fused") CHECK(r.estimate_us > 0);  // the kernel roofline
    CHECK(r.flops == costs[k].flops);
    CHECK(r.bytes_read == costs[k].bytes_read);
  }
  double estimate = 0;
  for (auto const& c : costs) estimate += c.estimate_us;
  CHECK(p.estimate_us() == estimate);
  CHECK(p.call_us >= p.measured_us());

  std::ostringstream printed;
  printed << p;
  CHECK_THAT(printed.str(), ContainsSubstring("measured us"));
  CHECK_THAT(printed.str(), ContainsSubstring("tessel::all_reduce(mp)[dot_general#5]"));
  CHECK_THAT(printed.str(), ContainsSubstring("4 instructions: measured"));
}

TEST_CASE("profile while tracing: both see the call", "[tools][profile][trace]") {
  auto mesh = make_mesh({8}, {"x"});
  auto x = device_put(test::iota_data<float>(Shape{64}), Shape{64}, NamedSharding(mesh, P("x")));
  auto f = jit([](auto const& v) { return sum(exp(v), 0); });
  (void)f(x);
  auto path = (std::filesystem::temp_directory_path() / "tessel_test_profile_trace.json").string();
  start_trace(path);
  Profile p = profile(f, x);
  (void)f(x);  // the trace is still on after the profile
  stop_trace();
  REQUIRE(p.rows.size() == f.plan(x).steps.size());
  std::ifstream in(path);
  auto trace = nlohmann::json::parse(in);
  std::size_t events = 0;
  for (auto const& e : trace) events += e["ph"] == "X";
  CHECK(events == 2 * f.plan(x).steps.size() * 8);
  std::filesystem::remove(path);
}

TEST_CASE("a trace cannot start while a profile watches the steps", "[tools][profile][trace]") {
  // A jitted function that tries: start_trace names what is going on.
  auto x = device_put(test::iota_data<float>(Shape{8}), Shape{8}, NamedSharding(make_mesh({8}, {"x"}), P("x")));
  auto f = jit([](auto const& v) {
    start_trace((std::filesystem::temp_directory_path() / "tessel_test_never.json").string());
    return v + 1.0f;
  });
  CHECK_THROWS_WITH(profile(f, x), ContainsSubstring("steps are being watched already (a profile is running)"));
  CHECK(!trace_path());
  (void)x;
}
