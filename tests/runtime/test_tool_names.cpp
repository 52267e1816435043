// Kokkos Tools see the plan: run under the recorder (tests/support/kokkos_recorder, loaded through
// KOKKOS_TOOLS_LIBS), every instruction is one region named by its label, in the order explain
// lists them, and every kernel inside carries the same label.
#include <catch2/catch_test_macros.hpp>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "support/data.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;

namespace {

std::vector<std::string> read_events() {
  char const* path = std::getenv("TESSEL_RECORDER_OUT");
  REQUIRE(path != nullptr);
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<std::string> json_labels(std::string const& json) {
  std::vector<std::string> labels;
  std::regex label("\"label\": \"([^\"]*)\"");
  for (auto it = std::sregex_iterator(json.begin(), json.end(), label); it != std::sregex_iterator(); ++it)
    labels.push_back((*it)[1]);
  return labels;
}

struct Recorded {
  std::vector<std::string> regions;     // top-level regions, in order
  std::vector<std::string> mislabelled; // "kernel K in region R" where K != R
};

// The events after the last marker region: each top-level region, and any kernel inside one whose
// name is not the region's.
Recorded recorded_since(std::string const& marker) {
  auto lines = read_events();
  std::size_t start = 0;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i] == "region " + marker) start = i + 2;  // the marker's "end" follows
  Recorded r;
  std::vector<std::string> open;
  for (std::size_t i = start; i < lines.size(); ++i) {
    std::string const& l = lines[i];
    if (l.rfind("region ", 0) == 0) {
      if (open.empty()) r.regions.push_back(l.substr(7));
      open.push_back(l.substr(7));
    } else if (l == "end") {
      if (!open.empty()) open.pop_back();
    } else if (l.rfind("for ", 0) == 0 || l.rfind("reduce ", 0) == 0 || l.rfind("scan ", 0) == 0) {
      std::string name = l.substr(l.find(' ') + 1);
      if (open.empty() || name != open.front()) r.mislabelled.push_back(name + " in " + (open.empty() ? "(no region)" : open.front()));
    }
  }
  return r;
}

int marks = 0;

// Runs `run` under a fresh marker; the recorded regions must be exactly the plan's labels.
template <class Run>
void check_names(std::string const& json, Run const& run) {
  run();  // the first run makes the plan and warms the pool
  std::string marker = "test::mark#" + std::to_string(++marks);
  Kokkos::Profiling::pushRegion(marker);
  Kokkos::Profiling::popRegion();
  run();
  Kokkos::Profiling::pushRegion(marker + "/done");  // a pop flushes the recorder's buffer
  Kokkos::Profiling::popRegion();
  auto r = recorded_since(marker);
  REQUIRE(!r.regions.empty());
  CHECK(r.regions.back() == marker + "/done");
  r.regions.pop_back();
  INFO(json);
  CHECK(r.regions == json_labels(json));
  CHECK(r.mislabelled.empty());
  for (auto const& m : r.mislabelled) UNSCOPED_INFO(m);
}

}  // namespace

TEST_CASE("the recorder is loaded", "[runtime][tools]") { REQUIRE(Kokkos::Tools::profileLibraryLoaded()); }

TEST_CASE("the Megatron block's recorded regions are exactly its plan's instructions", "[runtime][tools]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  auto x = device_put(test::iota_data<float>(Shape{64, 32}), Shape{64, 32}, NamedSharding(mesh, P("dp", None)));
  auto w1 = device_put(test::iota_data<float>(Shape{32, 128}), Shape{32, 128}, NamedSharding(mesh, P(None, "mp")));
  auto w2 = device_put(test::iota_data<float>(Shape{128, 32}), Shape{128, 32}, NamedSharding(mesh, P("mp", None)));
  auto block = [&] { return matmul(gelu(matmul(x, w1)), w2); };
  std::string json = explain_json(block());
  auto labels = json_labels(json);
  REQUIRE(labels.size() == 4);
  CHECK(labels[0] == "tessel::gemm[dot_general#2]");
  CHECK(labels[1] == "tessel::fused[gelu]");
  CHECK(labels[2] == "tessel::gemm[dot_general#5]");
  CHECK(labels[3] == "tessel::all_reduce(mp)[dot_general#5]");
  check_names(json, [&] { (void)eval(block()); });
}

TEST_CASE("recorded regions match the plan for reductions, reshards, views and concatenation", "[runtime][tools]") {
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  auto x = device_put(test::iota_data<float>(Shape{16, 32}), Shape{16, 32}, NamedSharding(mesh, P("a", "b")));
  SECTION("softmax (row-fused reductions) and a mean over a sharded axis (collective, then divide)") {
    check_names(explain_json(softmax(x, 0)), [&] { (void)eval(softmax(x, 0)); });
    check_names(explain_json(mean(exp(x), 1)), [&] { (void)eval(mean(exp(x), 1)); });
  }
  SECTION("a reshard composition: all-gather, then local slice") {
    auto e = [&] { return with_sharding_constraint(x * 2.0f, NamedSharding(mesh, P("b", "a"))); };
    check_names(explain_json(e()), [&] { (void)eval(e()); });
  }
  SECTION("a cumsum over a sharded axis (local scan, then the carry) and a causal mask") {
    check_names(explain_json(cumsum(x, 1)), [&] { (void)eval(cumsum(x, 1)); });
    auto masked = [&] { return softmax(where(iota<std::int32_t>(Shape{16, 32}, 0) >= iota<std::int32_t>(Shape{16, 32}, 1), x, -1e30f)); };
    check_names(explain_json(masked()), [&] { (void)eval(masked()); });
  }
  SECTION("a vocab-parallel embedding lookup and an argmax over a sharded axis") {
    auto ids = device_put(std::vector<std::int32_t>{3, 1, 4, 1, 5, 9, 2, 6}, Shape{8}, NamedSharding(mesh, P("b")));
    check_names(explain_json(take(x, ids)), [&] { (void)eval(take(x, ids)); });
    check_names(explain_json(argmax(x, 1)), [&] { (void)eval(argmax(x, 1)); });
  }
  SECTION("a transpose made apart, a zero-copy reshape and a concatenate") {
    auto e = [&] { return concatenate(0, reshape(x, {32, 16}), transpose(x)); };
    check_names(explain_json(e()), [&] { (void)eval(e()); });
  }
}
