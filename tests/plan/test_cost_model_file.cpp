// The cost model's file: written by tessel_calibrate, read by plan::cost_model() on first use.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdlib>
#include <filesystem>
#include <format>
#include <fstream>
#include <unistd.h>

#include "tessel/core/error.hpp"
#include "tessel/plan/cost_model.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace tessel;

namespace {

std::string temp_path(std::string const& name) {
  return (std::filesystem::temp_directory_path() / std::format("tessel_test_{}_{}", getpid(), name)).string();
}

std::string write_text(std::string const& name, std::string const& text) {
  auto path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

// Restores TESSEL_COST_MODEL (the test main empties it) and the defaults when a test ends.
struct EnvGuard {
  ~EnvGuard() {
    setenv("TESSEL_COST_MODEL", "", 1);
    plan::reload_cost_model();
  }
};

}  // namespace

TEST_CASE("a cost model survives a round trip through its file", "[plan][cost][file]") {
  plan::CostModel m;
  m.latency_us = 1.5;
  m.bandwidth_GBps = 3.25;
  m.all_gather = {12.5, 7.75};
  m.reduce_scatter = {3, 4};
  m.all_reduce = {20, 9.5};
  m.all_to_all = {0.125, 100};
  m.collective_permute = {8, 16};
  m.local_copy = {0.5, 30};
  auto path = temp_path("sub/dir/cost_model.txt");  // the folders are created
  plan::write_cost_model(m, path);
  CHECK(plan::read_cost_model(path) == m);
  CHECK(plan::read_cost_model(path).all_gather_us(1000, 4) == m.all_gather_us(1000, 4));
  plan::write_cost_model(plan::CostModel{}, path);  // the defaults, an infinite bandwidth included
  CHECK(plan::read_cost_model(path) == plan::CostModel{});
  std::filesystem::remove_all(std::filesystem::path(path).parent_path().parent_path());
}

TEST_CASE("entries left out of the file keep their defaults; comments and blank lines are skipped",
          "[plan][cost][file]") {
  auto path = write_text("partial.txt", "# measured\n\nall_reduce 40 2.5  # slow\n");
  auto m = plan::read_cost_model(path);
  CHECK(m.all_reduce == plan::AlphaBeta{40, 2.5});
  CHECK(m.all_gather == plan::AlphaBeta{});
  std::filesystem::remove(path);
}

TEST_CASE("the cost model path follows TESSEL_COST_MODEL, then XDG_CACHE_HOME, then HOME", "[plan][cost][file]") {
  EnvGuard restore;
  setenv("TESSEL_COST_MODEL", "/somewhere/model.txt", 1);
  CHECK(plan::cost_model_path() == "/somewhere/model.txt");
  setenv("TESSEL_COST_MODEL", "", 1);
  CHECK(!plan::cost_model_path());
  unsetenv("TESSEL_COST_MODEL");
  std::string xdg = std::getenv("XDG_CACHE_HOME") ? std::getenv("XDG_CACHE_HOME") : "";
  std::string home = std::getenv("HOME") ? std::getenv("HOME") : "";
  setenv("XDG_CACHE_HOME", "/cache", 1);
  CHECK(plan::cost_model_path() == "/cache/tessel/cost_model.txt");
  unsetenv("XDG_CACHE_HOME");
  setenv("HOME", "/home/someone", 1);
  CHECK(plan::cost_model_path() == "/home/someone/.cache/tessel/cost_model.txt");
  if (!xdg.empty()) setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
  if (home.empty()) unsetenv("HOME");
  else setenv("HOME", home.c_str(), 1);
}

TEST_CASE("cost_model() loads the file, and a malformed one leaves the model in force", "[plan][cost][file][error]") {
  EnvGuard restore;
  auto good = write_text("good.txt", "all_gather 11 22\n");
  setenv("TESSEL_COST_MODEL", good.c_str(), 1);
  plan::reload_cost_model();
  CHECK(plan::cost_model().all_gather == plan::AlphaBeta{11, 22});

  auto bad = write_text("bad.txt", "# header\nall_reduce 1 2\nall_gather 5 abc\n");
  setenv("TESSEL_COST_MODEL", bad.c_str(), 1);
  CHECK_THROWS_AS(plan::reload_cost_model(), Error);
  CHECK_THROWS_WITH(plan::reload_cost_model(),
                    ContainsSubstring(std::format("cost model file '{}', line 3: bandwidth_GBps of 'all_gather' is "
                                                  "'abc'; expected a positive number",
                                                  bad)));
  CHECK(plan::cost_model().all_gather == plan::AlphaBeta{11, 22});  // unchanged
  CHECK(plan::cost_model().all_reduce == plan::AlphaBeta{});         // nothing of the bad file applied

  setenv("TESSEL_COST_MODEL", temp_path("missing.txt").c_str(), 1);
  plan::reload_cost_model();  // no file: the defaults
  CHECK(plan::cost_model() == plan::CostModel{});
  std::filesystem::remove(good);
  std::filesystem::remove(bad);
}

TEST_CASE("malformed cost model files fail naming the file, the line and the field", "[plan][cost][file][error]") {
  auto check = [](std::string const& text, std::string const& message) {
    auto path = write_text("malformed.txt", text);
    CHECK_THROWS_WITH(plan::read_cost_model(path),
                      ContainsSubstring(std::format("cost model file '{}', line ", path)) && ContainsSubstring(message));
    std::filesystem::remove(path);
  };
  check("all_gather 1 2\nbroadcast 1 2\n", "line 2: unknown entry 'broadcast' (expected one of transfer, all_gather");
  check("all_to_all 1\n", "line 1: entry 'all_to_all' has 1 values; expected 2 (latency_us bandwidth_GBps)");
  check("all_to_all 1 2 3\n", "line 1: entry 'all_to_all' has 3 values");
  check("\nall_reduce -1 2\n", "line 2: latency_us of 'all_reduce' is '-1'; expected a finite non-negative number");
  check("transfer 1 0\n", "line 1: bandwidth_GBps of 'transfer' is '0'; expected a positive number");
  check("local_copy 1x 2\n", "line 1: latency_us of 'local_copy' is '1x'");
  check("local_copy nan 2\n", "latency_us of 'local_copy' is 'nan'");
  CHECK_THROWS_WITH(plan::read_cost_model("/nonexistent/tessel/model.txt"),
                    ContainsSubstring("cost model file '/nonexistent/tessel/model.txt' cannot be read"));
  CHECK_THROWS_WITH(plan::write_cost_model(plan::CostModel{}, "/proc/tessel_no/model.txt"),
                    ContainsSubstring("cost model file '/proc/tessel_no/model.txt' cannot be written"));
}
