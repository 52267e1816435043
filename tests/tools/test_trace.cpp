// The trace (tools/trace.hpp): the Megatron block traced, event by event against its plan: one
// event per step per device, named by the step's label, with the plan's kinds, bytes, flops,
// GEMM shapes and collective groups (counted by the trace from the blocks the run made, by the
// plan's cost analysis from the shardings alone); and its errors.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "support/data.hpp"
#include "tessel/tessel.hpp"
#include "tessel/plan/cost_analysis.hpp"
#include "tessel/tools/trace.hpp"

using namespace tessel;
using Catch::Matchers::ContainsSubstring;
using nlohmann::json;

namespace {

std::string temp_path(std::string const& name) {
  return (std::filesystem::temp_directory_path() / ("tessel_test_" + name)).string();
}

json read_trace(std::string const& path) {
  std::ifstream in(path);
  REQUIRE(in.good());
  return json::parse(in);  // complete JSON once the trace stopped
}

// The duration events, in file order.
std::vector<json> steps_of(json const& trace) {
  std::vector<json> out;
  for (auto const& e : trace)
    if (e["ph"] == "X") out.push_back(e);
  return out;
}

// Every event against the plan's step and cost analysis; returns the events per device.
std::map<int, int> check_against_plan(std::vector<json> const& events, plan::Plan const& plan) {
  auto costs = plan::cost_analysis(plan);
  std::map<int, int> per_device;
  for (auto const& e : events) {
    INFO(e.dump());
    auto k = e["args"]["step"].get<std::size_t>();
    REQUIRE(k < plan.steps.size());
    auto const& step = plan.steps[k];
    auto const& c = costs[k];
    int d = e["tid"].get<int>();
    ++per_device[d];
    CHECK(e["name"] == step.label);
    CHECK(e["cat"] == c.kind);
    CHECK(e["pid"] == 0);
    CHECK(e["dur"].get<double>() >= 0);
    CHECK(std::find(c.devices.begin(), c.devices.end(), d) != c.devices.end());
    CHECK(e["args"]["bytes_read"].get<double>() == c.bytes_read);
    CHECK(e["args"]["bytes_written"].get<double>() == c.bytes_written);
    CHECK(e["args"]["flops"].get<double>() == c.flops);
    CHECK(e["args"]["estimate_us"].get<double>() == step.estimate_us);
    CHECK(e["args"]["text"] == plan::step_text(plan, step));
    if (step.kind == plan::StepKind::kernel) CHECK(e["args"]["ops"].get<std::vector<std::string>>() == c.ops);
    if (c.kind == "gemm") {
      CHECK(e["args"]["m"] == c.m);
      CHECK(e["args"]["n"] == c.n);
      CHECK(e["args"]["k"] == c.k);
      CHECK(e["args"]["batch"] == c.batch);
    }
    if (!c.groups.empty()) {
      CHECK(e["args"]["replica_groups"].get<std::vector<std::vector<int>>>() == c.groups);
      CHECK(e["args"]["mesh_axes"].get<std::vector<std::string>>() == c.mesh_axes);
      auto group = e["args"]["group"].get<std::vector<int>>();
      CHECK(std::find(group.begin(), group.end(), d) != group.end());
      CHECK(e["args"]["bytes"].get<double>() == step.bytes);
    }
    if (step.kind == plan::StepKind::collective) CHECK(e["args"]["collective"] == plan::name(step.collective));
  }
  return per_device;
}

}  // namespace

TEST_CASE("the Megatron block's trace has one event per instruction per device, as its plan says", "[tools][trace]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  auto x = device_put(test::iota_data<float>(Shape{64, 32}), Shape{64, 32}, NamedSharding(mesh, P("dp", None)));
  auto w1 = device_put(test::iota_data<float>(Shape{32, 128}), Shape{32, 128}, NamedSharding(mesh, P(None, "mp")));
  auto w2 = device_put(test::iota_data<float>(Shape{128, 32}), Shape{128, 32}, NamedSharding(mesh, P("mp", None)));
  auto mlp = jit([](auto const& x, auto const& w1, auto const& w2) { return matmul(relu(x.matmul(w1)), w2); });
  (void)mlp(x, w1, w2);  // planned and warm
  auto const& plan = mlp.plan(x, w1, w2);
  INFO(plan::to_string(plan));
  REQUIRE(plan.steps.size() == 4);  // gemm, relu, gemm, all-reduce over mp

  std::string path = temp_path("megatron_trace.json");
  start_trace(path);
  REQUIRE(trace_path() == path);
  (void)mlp(x, w1, w2);
  (void)mlp(x, w1, w2);
  stop_trace();
  CHECK(!trace_path());

  json trace = read_trace(path);
  auto events = steps_of(trace);
  REQUIRE(events.size() == 2 * 4 * 8);  // two calls, 4 instructions, 8 devices
  auto per_device = check_against_plan(events, plan);
  REQUIRE(per_device.size() == 8);
  for (auto [device, count] : per_device) CHECK(count == 2 * static_cast<int>(plan.steps.size()));

  // Each device's track: the steps in plan order, each starting after the one before ended.
  for (int d = 0; d < 8; ++d) {
    std::vector<json> track;
    for (auto const& e : events)
      if (e["tid"] == d) track.push_back(e);
    for (std::size_t i = 0; i < track.size(); ++i) {
      CHECK(track[i]["args"]["step"] == i % 4);
      CHECK(track[i]["args"]["call"] == 1 + i / 4);
      if (i > 0) CHECK(track[i]["ts"].get<double>() >= track[i - 1]["ts"].get<double>() + track[i - 1]["dur"].get<double>());
    }
  }
  // By hand, per device: x's block 16x32, W1's 32x64, W2's 64x32; the partial result 16x32.
  auto const& gemm1 = events[0];
  CHECK(gemm1["name"] == "tessel::gemm[dot_general#2]");
  CHECK(gemm1["args"]["m"] == 16);
  CHECK(gemm1["args"]["n"] == 64);
  CHECK(gemm1["args"]["k"] == 32);
  CHECK(gemm1["args"]["flops"] == 2.0 * 16 * 64 * 32);
  CHECK(gemm1["args"]["bytes_read"] == (16 * 32 + 32 * 64) * 4.0);
  auto const& reduce = events[3 * 8];
  CHECK(reduce["cat"] == "all_reduce");
  CHECK(reduce["args"]["collective"] == "all-reduce");
  CHECK(reduce["args"]["mesh_axes"] == json::array({"mp"}));
  CHECK(reduce["args"]["replica_groups"] == json::parse("[[0,1],[2,3],[4,5],[6,7]]"));
  CHECK(reduce["args"]["bytes"] == 16 * 32 * 4.0);
  // Perfetto's track names: the process, and each device.
  int named = 0;
  for (auto const& e : trace)
    if (e["ph"] == "M" && e["name"] == "thread_name") ++named;
  CHECK(named == 8);
  std::filesystem::remove(path);
}

TEST_CASE("a traced reshard names its collective's groups and bytes", "[tools][trace]") {
  auto mesh = make_mesh({8}, {"x"});
  auto a = device_put(test::iota_data<float>(Shape{64, 64}), Shape{64, 64}, NamedSharding(mesh, P("x")));
  auto b = device_put(test::iota_data<float>(Shape{64, 64}), Shape{64, 64}, NamedSharding(mesh, P(None, "x")));
  auto const& plan = plan_of(a + b);
  INFO(plan::to_string(plan));
  REQUIRE(plan.count(plan::Collective::all_to_all) == 1);
  (void)eval(a + b);
  std::string path = temp_path("reshard_trace.json");
  {
    TraceScope scope(path);
    (void)eval(a + b);
  }
  auto events = steps_of(read_trace(path));
  REQUIRE(events.size() == plan.steps.size() * 8);
  check_against_plan(events, plan);
  auto all_to_all = std::find_if(events.begin(), events.end(), [](json const& e) { return e["cat"] == "all_to_all"; });
  REQUIRE(all_to_all != events.end());
  CHECK((*all_to_all)["args"]["replica_groups"] == json::parse("[[0,1,2,3,4,5,6,7]]"));
  CHECK((*all_to_all)["args"]["bytes_read"] == 64 * 8 * 4.0);
  std::filesystem::remove(path);
}

TEST_CASE("a traced dynamic_update_slice counts its box when it ran in place, its operand when it copied",
          "[tools][trace]") {
  auto mesh = make_mesh({8}, {"x"});
  auto update = device_put(test::iota_data<float>(Shape{16, 2}), Shape{16, 2}, NamedSharding(mesh, P("x")));
  auto bytes_of = [&](bool donated) {
    auto cache = device_put(test::iota_data<float>(Shape{16, 64}), Shape{16, 64}, NamedSharding(mesh, P("x")));
    std::string path = temp_path(donated ? "dus_donated.json" : "dus_copied.json");
    {
      TraceScope scope(path);
      cache = lax::dynamic_update_slice_in_dim(donated ? donate(cache) : cache, update, 5, 1);
    }
    auto events = steps_of(read_trace(path));
    std::filesystem::remove(path);
    auto it = std::find_if(events.begin(), events.end(), [](json const& e) { return e["cat"] == "dynamic_update_slice"; });
    REQUIRE(it != events.end());
    return std::pair{(*it)["args"]["bytes_read"].get<double>(), (*it)["args"]["bytes_written"].get<double>()};
  };
  // Each device holds 2 rows of the cache: in place it reads and writes its 2 x 2 box of the update.
  CHECK(bytes_of(true) == std::pair{2 * 2 * 4.0, 2 * 2 * 4.0});
  // Copied, it read its 2 x 64 block and the update's, and wrote a new 2 x 64 block.
  CHECK(bytes_of(false) == std::pair{(2 * 64 + 2 * 2) * 4.0, 2 * 64 * 4.0});
}

TEST_CASE("a traced gather reads the rows it takes, not the table", "[tools][trace]") {
  auto mesh = make_mesh({8}, {"x"});
  auto table = device_put(test::iota_data<float>(Shape{64, 16}), Shape{64, 16}, NamedSharding(mesh, P()));
  auto ids = device_put(std::vector<std::int32_t>{3, 60, 7, 7, 0, 1, 2, 63}, Shape{8}, NamedSharding(mesh, P("x")));
  std::string path = temp_path("take.json");
  {
    TraceScope scope(path);
    (void)eval(take(table, ids));
  }
  auto events = steps_of(read_trace(path));
  std::filesystem::remove(path);
  auto it = std::find_if(events.begin(), events.end(), [](json const& e) { return e["cat"] == "take"; });
  REQUIRE(it != events.end());
  // Each device takes one row of 16 floats by its one index.
  CHECK((*it)["args"]["bytes_read"].get<double>() == 16 * 4 + 4);
  CHECK((*it)["args"]["bytes_written"].get<double>() == 16 * 4);
}

TEST_CASE("trace errors name the file and the reason", "[tools][trace]") {
  CHECK_THROWS_WITH(start_trace("/nonexistent-tessel-dir/trace.json"),
                    "tessel: cannot write the trace file '/nonexistent-tessel-dir/trace.json': No such file or directory");
  CHECK_THROWS_WITH(start_trace(""), "tessel::start_trace: the trace file's path is empty");
  CHECK(!trace_path());
  std::string path = temp_path("twice.json");
  start_trace(path);
  CHECK_THROWS_WITH(start_trace(temp_path("other.json")),
                    ContainsSubstring("a trace is already being written to '" + path + "'; stop_trace() first"));
  stop_trace();
  stop_trace();  // nothing on: nothing to do
  CHECK(read_trace(path).size() == 1);  // the process's name alone
  std::filesystem::remove(path);
}

// Run by CTest with TESSEL_TRACE set (tests/CMakeLists.txt): the environment's trace starts at the
// first step, or its bad path fails the first call with a message naming the variable.
TEST_CASE("TESSEL_TRACE traces the program", "[.trace_environment]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  auto x = device_put(test::iota_data<float>(Shape{8, 16}), Shape{8, 16}, NamedSharding(mesh, P("dp", "mp")));
  (void)eval(sum(exp(x), 1));
  REQUIRE(trace_path());
  CHECK(*trace_path() == std::getenv("TESSEL_TRACE"));
  // Left on: the ScopeGuard's end (Kokkos finalizing) completes the file; CTest checks it next.
}

TEST_CASE("a bad TESSEL_TRACE fails the first call, naming it", "[.trace_environment_bad]") {
  auto mesh = make_mesh({8}, {"x"});
  auto x = device_put(test::iota_data<float>(Shape{8}), Shape{8}, NamedSharding(mesh, P("x")));
  CHECK_THROWS_WITH(eval(x + 1.0f), "TESSEL_TRACE=/nonexistent-tessel-dir/trace.json: tessel: cannot write the trace "
                                    "file '/nonexistent-tessel-dir/trace.json': No such file or directory");
  CHECK(!trace_path());
  CHECK(eval(x + 1.0f).to_host()[7] == test::iota_data<float>(Shape{8})[7] + 1.0f);  // later calls run, untraced
}
