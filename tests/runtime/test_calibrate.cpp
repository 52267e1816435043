// Calibration: the fit recovers a known model, and a quick measurement gives a usable one.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>

#include "tessel/runtime/calibrate.hpp"
#include "tessel/tessel.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace tessel;

TEST_CASE("the alpha-beta fit recovers latency and bandwidth from exact times", "[runtime][calibrate]") {
  std::vector<double> steps, moved, us;
  for (double bytes : {4e3, 6.4e4, 1e6, 1.6e7}) {
    steps.push_back(7);
    moved.push_back(bytes);
    us.push_back(7 * 12.0 + bytes / (3.5 * 1e3));  // 12 us per step, 3.5 GB/s
  }
  auto ab = fit_alpha_beta(steps, moved, us);
  CHECK(std::abs(ab.latency_us - 12.0) < 1e-6);
  CHECK(std::abs(ab.bandwidth_GBps - 3.5) < 1e-6);
  // Times that fall with size (noise) give no negative latency.
  std::vector<double> noisy{10, 9};
  std::vector<double> one_step{1, 1}, bytes{1e3, 2e3};
  auto clamped = fit_alpha_beta(one_step, bytes, noisy);
  CHECK(clamped.latency_us >= 0);
  CHECK(clamped.bandwidth_GBps > 0);
}

TEST_CASE("a quick calibration measures every collective and fits a usable model", "[runtime][calibrate]") {
  CalibrationOptions quick;
  quick.sizes = {4096, 65536, 1 << 20};
  quick.repeats = 3;
  auto c = calibrate(quick);
  CHECK(c.points.size() == 3 * 6);
  for (auto const& ab : {c.model.all_gather, c.model.reduce_scatter, c.model.all_reduce, c.model.all_to_all,
                         c.model.collective_permute, c.model.local_copy}) {
    CHECK(ab.latency_us >= 0);
    CHECK(ab.bandwidth_GBps > 0);
    CHECK(std::isfinite(ab.bandwidth_GBps));
  }
  auto table = to_string(c);
  CHECK_THAT(table, ContainsSubstring("in-process collectives on 8 devices"));
  CHECK_THAT(table, ContainsSubstring("collective_permute"));
}

TEST_CASE("calibration refuses sizes the devices cannot split", "[runtime][calibrate][error]") {
  CalibrationOptions bad;
  bad.sizes = {4096, 1000};
  CHECK_THROWS_WITH(calibrate(bad), ContainsSubstring("calibrate: size 1000 bytes is not a positive multiple of 4 * 8 "
                                                      "devices = 32 bytes"));
}

TEST_CASE("calibration needs two devices", "[runtime][calibrate][error]") {
  set_device_count(1);
  CHECK_THROWS_WITH(calibrate(), ContainsSubstring("calibrate: this process has 1 device; collectives need at least 2"));
  set_device_count(8);
}
