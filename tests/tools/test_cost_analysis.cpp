// explain's cost analysis (plan/cost_analysis.hpp) against values computed by hand: a matmul
// whose contracting dimension is split (a GEMM per device, then an all-reduce of its partial
// sums), and a sum whose partial results meet in an all-reduce, over 'mp' and over 'dp'.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_floating_point.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <filesystem>
#include <format>
#include <fstream>
#include <nlohmann/json.hpp>

#include "support/data.hpp"
#include "tessel/tessel.hpp"
#include "tessel/plan/cost_analysis.hpp"

using namespace tessel;
using Catch::Matchers::ContainsSubstring;
using Catch::Matchers::WithinRel;
using nlohmann::json;

namespace {
// The default cost model (the tests run without a calibrated one): a ring all-reduce over n
// devices of B bytes each costs 2 (n - 1) * 5 us + 2 (n - 1) / n * B / (10 GB/s).
double all_reduce_us(double bytes, int n) { return 2 * (n - 1) * 5.0 + 2.0 * (n - 1) / n * bytes / 1e4; }
// ... and a kernel 2 us to launch, then its bytes at 10 GB/s or its flops at 100 GFLOP/s, the longer.
double kernel_us(double flops, double bytes) { return 2.0 + std::max(bytes / 1e4, flops / 1e5); }
}  // namespace

TEST_CASE("cost analysis of a matmul over a split contracting dimension", "[tools][cost_analysis]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  // x (8, 16) split by columns over mp, w (16, 4) by rows: each device multiplies 8x8 by 8x4.
  auto x = device_put(test::iota_data<float>(Shape{8, 16}), Shape{8, 16}, NamedSharding(mesh, P(None, "mp")));
  auto w = device_put(test::iota_data<float>(Shape{16, 4}), Shape{16, 4}, NamedSharding(mesh, P("mp", None)));
  auto const& plan = plan_of(matmul(x, w));
  std::string text = explain(matmul(x, w));
  INFO(text);
  REQUIRE(plan.steps.size() == 2);
  auto costs = plan::cost_analysis(plan);
  auto const& gemm = costs[0];
  CHECK(gemm.kind == "gemm");
  CHECK(gemm.m == 8);
  CHECK(gemm.n == 4);
  CHECK(gemm.k == 8);
  CHECK(gemm.batch == 1);
  CHECK(gemm.flops == 2 * 8 * 4 * 8);
  CHECK(gemm.bytes_read == (8 * 8 + 8 * 4) * 4);
  CHECK(gemm.bytes_written == 8 * 4 * 4);
  CHECK_THAT(gemm.estimate_us, WithinRel(kernel_us(512, 512), 1e-12));  // 2.0512 us: memory bound
  CHECK_THAT(gemm.estimate_us, WithinRel(2.0512, 1e-12));
  CHECK(gemm.groups.empty());
  CHECK(gemm.devices == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7});
  auto const& reduce = costs[1];
  CHECK(reduce.kind == "all_reduce");
  CHECK(reduce.flops == 0);
  CHECK(reduce.bytes_read == 128);
  CHECK(reduce.bytes_written == 128);
  CHECK_THAT(reduce.estimate_us, WithinRel(all_reduce_us(128, 2), 1e-12));
  CHECK(reduce.estimate_us == plan.steps[1].estimate_us);
  CHECK(reduce.mesh_axes == std::vector<std::string>{"mp"});
  CHECK(reduce.groups == std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});

  // explain: the instruction lines as before, then the section.
  CHECK_THAT(text, ContainsSubstring("gemm      dot_general -> float32[8,4]"));
  CHECK_THAT(text, ContainsSubstring("cost analysis, per device:\n"
                                     "  #0 tessel::gemm[dot_general#2]: 512 flops (m 8, n 4, k 8), 384 bytes read, "
                                     "128 bytes written, est 2.1 us\n"
                                     "  #1 tessel::all_reduce(mp)[dot_general#2]: 0 flops, 128 bytes read, 128 bytes "
                                     "written, est 10.0 us, replica_groups={{0,1},{2,3},{4,5},{6,7}}\n"
                                     "  total: 512 flops, 512 bytes read, 256 bytes written, est 12.1 us\n"));

  // explain_json: the same numbers as data.
  json j = json::parse(explain_json(matmul(x, w)));
  auto const& s0 = j["steps"][0];
  CHECK(s0["flops"] == 512);
  CHECK(s0["m"] == 8);
  CHECK(s0["n"] == 4);
  CHECK(s0["k"] == 8);
  CHECK(s0["batch"] == 1);
  CHECK(s0["bytes_read"] == 384);
  CHECK(s0["bytes_written"] == 128);
  CHECK(s0["ops"] == json::array({"dot_general"}));
  auto const& s1 = j["steps"][1];
  CHECK(s1["kind"] == "all_reduce");
  CHECK(s1["replica_groups"] == json::parse("[[0,1],[2,3],[4,5],[6,7]]"));
  CHECK(s1["mesh_axes"] == json::array({"mp"}));
  CHECK(s1["bytes_read"] == 128);
  CHECK_THAT(s1["estimate_us"].get<double>(), WithinRel(all_reduce_us(128, 2), 1e-12));
  CHECK(j["cost_analysis"]["flops"] == 512);
  CHECK(j["cost_analysis"]["bytes_accessed"] == 512 + 256);
  CHECK_THAT(s0["estimate_us"].get<double>(), WithinRel(kernel_us(512, 512), 1e-12));
  CHECK_THAT(j["cost_analysis"]["estimate_us"].get<double>(),
             WithinRel(kernel_us(512, 512) + all_reduce_us(128, 2), 1e-12));
}

TEST_CASE("cost analysis of a sum's all-reduce, over either mesh axis", "[tools][cost_analysis]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  auto x = device_put(test::iota_data<float>(Shape{8, 16}), Shape{8, 16}, NamedSharding(mesh, P("dp", "mp")));
  SECTION("rows: each device sums its 2x8 block's rows; 2 floats meet over mp") {
    auto const& plan = plan_of(sum(x, 1));
    INFO(plan::to_string(plan));
    REQUIRE(plan.steps.size() == 2);
    auto costs = plan::cost_analysis(plan);
    CHECK(costs[0].kind == "reduce");
    CHECK(costs[0].ops == std::vector<std::string>{"sum"});
    CHECK(costs[0].flops == 16);  // one add per element of the block read
    CHECK(costs[0].bytes_read == 64);
    CHECK(costs[0].bytes_written == 8);
    CHECK(costs[1].bytes_read == 8);
    CHECK(costs[1].bytes_written == 8);
    CHECK(costs[1].groups == std::vector<std::vector<int>>{{0, 1}, {2, 3}, {4, 5}, {6, 7}});
    CHECK_THAT(costs[1].estimate_us, WithinRel(all_reduce_us(8, 2), 1e-12));
  }
  SECTION("columns: 8 floats meet over dp, in JAX's replica groups {{0,2,4,6},{1,3,5,7}}") {
    auto const& plan = plan_of(sum(x, 0));
    INFO(plan::to_string(plan));
    REQUIRE(plan.steps.size() == 2);
    auto costs = plan::cost_analysis(plan);
    CHECK(costs[1].mesh_axes == std::vector<std::string>{"dp"});
    CHECK(costs[1].groups == std::vector<std::vector<int>>{{0, 2, 4, 6}, {1, 3, 5, 7}});
    CHECK(costs[1].bytes_read == 32);
    CHECK_THAT(costs[1].estimate_us, WithinRel(all_reduce_us(32, 4), 1e-12));
    CHECK_THAT(explain(sum(x, 0)), ContainsSubstring("replica_groups={{0,2,4,6},{1,3,5,7}}"));
  }
}

TEST_CASE("a bfloat16 matmul's partial sums cross devices in float32", "[tools][cost_analysis]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  // As the float32 case above, in bfloat16: the operands are read in 2 bytes, the GEMM's partial
  // sums are written, all-reduced and priced in 4 (kernels/dot.cpp keeps them in float32).
  auto values = [](Shape const& shape) {
    std::vector<bfloat16> v;
    for (float f : test::iota_data<float>(shape)) v.emplace_back(f);
    return v;
  };
  auto x = device_put(values(Shape{8, 16}), Shape{8, 16}, NamedSharding(mesh, P(None, "mp")));
  auto w = device_put(values(Shape{16, 4}), Shape{16, 4}, NamedSharding(mesh, P("mp", None)));
  auto const& plan = plan_of(matmul(x, w));
  INFO(plan::to_string(plan));
  REQUIRE(plan.steps.size() == 2);
  auto costs = plan::cost_analysis(plan);
  CHECK(costs[0].kind == "gemm");
  CHECK(costs[0].bytes_read == (8 * 8 + 8 * 4) * 2);
  CHECK(costs[0].bytes_written == 8 * 4 * 4);
  CHECK(costs[1].kind == "all_reduce");
  CHECK(costs[1].bytes_read == 8 * 4 * 4);
  CHECK(costs[1].bytes_written == 8 * 4 * 4);
  CHECK(plan.steps[1].bytes == 8 * 4 * 4);
  CHECK_THAT(plan.steps[1].estimate_us, WithinRel(all_reduce_us(128, 2), 1e-12));
  CHECK_THAT(explain(matmul(x, w)), ContainsSubstring("(groups of 2): 128 bytes per device"));
}

TEST_CASE("a dynamic_update_slice is counted as XLA counts it, writing its box in place", "[tools][cost_analysis]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  // A (16, 64) cache split over dp takes 2 columns of its 16 rows: each device reads its (4, 2)
  // block of the update and writes those 8 elements, not its (4, 64) block of the cache.
  auto cache = device_put(test::iota_data<float>(Shape{16, 64}), Shape{16, 64}, NamedSharding(mesh, P("dp")));
  auto update = device_put(test::iota_data<float>(Shape{16, 2}), Shape{16, 2}, NamedSharding(mesh, P("dp")));
  auto write = lax::dynamic_update_slice_in_dim(cache, update, 5, 1);
  auto const& plan = plan_of(write);
  INFO(plan::to_string(plan));
  auto costs = plan::cost_analysis(plan);
  auto it = std::find_if(costs.begin(), costs.end(), [](auto const& c) { return c.kind == "dynamic_update_slice"; });
  REQUIRE(it != costs.end());
  CHECK(it->bytes_read == 4 * 2 * 4);
  CHECK(it->bytes_written == 4 * 2 * 4);
  CHECK(it->flops == 0);
}

TEST_CASE("a gather and a slice read the elements they take, as XLA counts them", "[tools][cost_analysis]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  auto find = [](auto const& costs, std::string const& kind) {
    auto it = std::find_if(costs.begin(), costs.end(), [&](auto const& c) { return c.kind == kind; });
    REQUIRE(it != costs.end());
    return *it;
  };
  SECTION("take: 4 rows of a (64, 16) table split over mp by columns, not each device's (64, 8) block") {
    auto table = device_put(test::iota_data<float>(Shape{64, 16}), Shape{64, 16}, NamedSharding(mesh, P(None, "mp")));
    auto ids = device_put(std::vector<std::int32_t>{3, 60, 7, 7}, Shape{4}, NamedSharding(mesh, P()));
    auto const& plan = plan_of(take(table, ids));
    INFO(plan::to_string(plan));
    auto const c = find(plan::cost_analysis(plan), "take");
    CHECK(c.bytes_written == 4 * 8 * 4);
    CHECK(c.bytes_read == 4 * 8 * 4 + 4 * 4);  // the rows it takes, and the indices
  }
  SECTION("dynamic_slice: 2 columns of a (16, 64) operand split over dp, not each device's (4, 64) block") {
    auto x = device_put(test::iota_data<float>(Shape{16, 64}), Shape{16, 64}, NamedSharding(mesh, P("dp")));
    auto const& plan = plan_of(lax::dynamic_slice_in_dim(x, 5, 2, 1));
    INFO(plan::to_string(plan));
    auto const c = find(plan::cost_analysis(plan), "dynamic_slice");
    CHECK(c.bytes_read == 4 * 2 * 4);
    CHECK(c.bytes_written == 4 * 2 * 4);
  }
}

TEST_CASE("a plan with nothing to run has no cost section", "[tools][cost_analysis]") {
  auto x = device_put(test::iota_data<float>(Shape{8}), Shape{8}, NamedSharding(make_mesh({8}, {"x"}), P("x")));
  CHECK(explain(as_node(x)) == "(nothing to run: the result is an input)\n");
  CHECK(json::parse(explain_json(as_node(x)))["cost_analysis"]["flops"] == 0);
}

TEST_CASE("kernel estimates are the cost model's roofline, memory or compute bound", "[tools][cost_analysis]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  // The GEMM of the first case: 512 flops, 384 bytes read and 128 written per device.
  auto x = device_put(test::iota_data<float>(Shape{8, 16}), Shape{8, 16}, NamedSharding(mesh, P(None, "mp")));
  auto w = device_put(test::iota_data<float>(Shape{16, 4}), Shape{16, 4}, NamedSharding(mesh, P("mp", None)));
  auto const& plan = plan_of(matmul(x, w));
  auto& model = plan::cost_model();
  plan::Roofline const before = model.kernel;
  SECTION("compute bound: 1 us + 512 flops at 1 GFLOP/s (0.512 us) over 512 bytes at 2 GB/s (0.256 us)") {
    model.kernel = {1.0, 2.0, 1.0};
    CHECK_THAT(plan::cost_analysis(plan)[0].estimate_us, WithinRel(1.512, 1e-12));
  }
  SECTION("memory bound: 512 bytes at 0.5 GB/s (1.024 us) over 512 flops at 100 GFLOP/s, no launch") {
    model.kernel = {0.0, 0.5, 100.0};
    CHECK_THAT(plan::cost_analysis(plan)[0].estimate_us, WithinRel(1.024, 1e-12));
    // The collective's estimate is the planner's, whatever the kernels cost.
    CHECK(plan::cost_analysis(plan)[1].estimate_us == plan.steps[1].estimate_us);
  }
  model.kernel = before;
}

TEST_CASE("the kernel roofline is read from and written to the cost model file", "[tools][cost_analysis]") {
  auto path = (std::filesystem::temp_directory_path() / "tessel_kernel_roofline.txt").string();
  plan::CostModel m;
  m.kernel = {3.5, 40, 250};
  plan::write_cost_model(m, path);
  CHECK(plan::read_cost_model(path) == m);
  CHECK(plan::read_cost_model(path).kernel_us(2.5e6, 4e5) == 3.5 + 10.0);  // 2.5 MFLOP at 250: 10 us; 400 KB at 40: 10 us
  auto fails = [&](std::string const& line, std::string const& message) {
    { std::ofstream(path) << "all_reduce 1 2\n" << line << "\n"; }
    CHECK_THROWS_WITH(plan::read_cost_model(path),
                      ContainsSubstring(std::format("cost model file '{}', line 2: {}", path, message)));
  };
  fails("kernel 1 2", "entry 'kernel' has 2 values; expected 3 (launch_us bandwidth_GBps GFLOPps)");
  fails("kernel 1 2 0", "GFLOPps of 'kernel' is '0'; expected a finite positive number");
  fails("kernel -1 2 3", "launch_us of 'kernel' is '-1'; expected a finite non-negative number");
  fails("kernel 1 inf 3", "bandwidth_GBps of 'kernel' is 'inf'; expected a finite positive number");
  std::filesystem::remove(path);
}
