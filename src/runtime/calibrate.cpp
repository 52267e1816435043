#include "tessel/runtime/calibrate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <format>
#include <functional>

#include "tessel/core/device_count.hpp"
#include "tessel/core/error.hpp"
#include "tessel/runtime/collectives.hpp"
#include "tessel/runtime/device.hpp"

namespace tessel {
namespace {

using Buffer = Kokkos::View<std::byte*, MemSpace>;

Box range(std::int64_t start, std::int64_t stop) { return Box{{start, stop}}; }
Box rect(IndexRange rows, IndexRange cols) { return Box{rows, cols}; }

double median_us(int repeats, std::function<void()> const& run) {
  run();  // untimed: first-touch of the buffers, kernel set-up
  std::vector<double> us;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    run();  // every collective fences all devices before it returns
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(us.begin(), us.end());
  return us[us.size() / 2];
}

}  // namespace

plan::AlphaBeta fit_alpha_beta(std::span<double const> steps, std::span<double const> moved,
                               std::span<double const> us) {
  // Weighted normal equations for us ~ steps * a + moved * g, weights 1 / us^2.
  double ss = 0, sm = 0, mm = 0, st = 0, mt = 0;
  for (std::size_t i = 0; i < us.size(); ++i) {
    double w = 1.0 / (us[i] * us[i]);
    ss += w * steps[i] * steps[i];
    sm += w * steps[i] * moved[i];
    mm += w * moved[i] * moved[i];
    st += w * steps[i] * us[i];
    mt += w * moved[i] * us[i];
  }
  double det = ss * mm - sm * sm;
  double a = det != 0 ? (st * mm - mt * sm) / det : 0;
  double g = det != 0 ? (ss * mt - sm * st) / det : 0;
  if (a < 0 || det == 0) {  // latency below the noise: bandwidth alone
    a = 0;
    g = mm > 0 ? mt / mm : 0;
  }
  if (g <= 0) g = 1e-9;  // no measurable byte cost: a bandwidth of 10^6 GB/s
  return {a, 1.0 / (g * 1e3)};
}

Calibration calibrate(CalibrationOptions const& options) {
  int n = device_count();
  if (n < 2)
    throw Error(std::format("calibrate: this process has {} device; collectives need at least 2 (set "
                            "TESSEL_NUM_DEVICES or set_device_count)",
                            n));
  for (std::size_t s : options.sizes)
    if (s == 0 || s % (4 * static_cast<std::size_t>(n)) != 0)
      throw Error(std::format("calibrate: size {} bytes is not a positive multiple of 4 * {} devices = {} bytes", s, n,
                              4 * n));
  std::size_t largest = *std::max_element(options.sizes.begin(), options.sizes.end());
  std::vector<Buffer> in, out;
  for (int d = 0; d < n; ++d) {
    in.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessel::calibrate_in"), largest);
    out.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessel::calibrate_out"), largest);
    Kokkos::deep_copy(in.back(), std::byte{0});  // zeros: valid floats to reduce
  }
  std::vector<GroupMember> group;
  for (int d = 0; d < n; ++d) group.push_back({d, in[static_cast<std::size_t>(d)].data(), out[static_cast<std::size_t>(d)].data()});
  auto& c = in_process_collectives();
  Calibration result;
  double ring = n - 1.0, frac = (n - 1.0) / n;

  auto measure = [&](char const* name, double bytes, double steps, double moved, std::function<void()> const& run) {
    result.points.push_back({name, n, bytes, steps, moved, median_us(options.repeats, run), 0});
  };
  for (std::size_t s : options.sizes) {
    auto e = static_cast<std::int64_t>(s / 4);  // float32 elements per device
    auto b = static_cast<double>(s);
    std::vector<Box> slices, wholes, rows, cols;
    for (int k = 0; k < n; ++k) {
      slices.push_back(range(k * e / n, (k + 1) * e / n));
      wholes.push_back(range(0, e));
      rows.push_back(rect({k, k + 1}, {0, e}));
      cols.push_back(rect({0, n}, {k * e / n, (k + 1) * e / n}));
    }
    std::vector<PermutePair> shift, self;
    for (int k = 0; k < n; ++k) {
      shift.push_back({k, (k + 1) % n});
      self.push_back({k, k});
    }
    measure("all_gather", b, ring, frac * b, [&] { c.all_gather(DType::float32, group, slices); });
    measure("reduce_scatter", b, ring, frac * b,
            [&] { c.reduce_scatter(DType::float32, ReduceOp::sum, group, range(0, e), slices); });
    measure("all_reduce", b, 2 * ring, 2 * frac * b,
            [&] { c.all_reduce(DType::float32, ReduceOp::sum, group, range(0, e)); });
    measure("all_to_all", b, ring, frac * b, [&] { c.all_to_all(DType::float32, group, rows, cols); });
    measure("collective_permute", b, 1, b,
            [&] { c.collective_permute(DType::float32, group, wholes, wholes, shift); });
    measure("local_copy", b, 1, b, [&] { c.collective_permute(DType::float32, group, wholes, wholes, self); });
  }

  plan::CostModel& m = result.model;
  std::pair<char const*, plan::AlphaBeta*> fits[] = {
      {"all_gather", &m.all_gather}, {"reduce_scatter", &m.reduce_scatter},         {"all_reduce", &m.all_reduce},
      {"all_to_all", &m.all_to_all}, {"collective_permute", &m.collective_permute}, {"local_copy", &m.local_copy}};
  for (auto [name, ab] : fits) {
    std::vector<double> steps, moved, us;
    for (auto const& p : result.points)
      if (p.collective == name) {
        steps.push_back(p.steps);
        moved.push_back(p.moved);
        us.push_back(p.measured_us);
      }
    *ab = fit_alpha_beta(steps, moved, us);
    for (auto& p : result.points)
      if (p.collective == name) p.fitted_us = ab->us(p.moved, p.steps);
  }
  // Point-to-point copies (a generic reshard) move like a permute.
  m.latency_us = m.collective_permute.latency_us;
  m.bandwidth_GBps = m.collective_permute.bandwidth_GBps;
  return result;
}

std::string to_string(Calibration const& c) {
  int n = c.points.empty() ? 0 : c.points[0].devices;
  std::string s = std::format("in-process collectives on {} devices (ring formulas, per-device bytes)\n", n);
  s += std::format("{:<20} {:>12} {:>16}\n", "collective", "latency_us", "bandwidth_GBps");
  plan::CostModel m = c.model;
  std::pair<char const*, plan::AlphaBeta> fits[] = {
      {"all_gather", m.all_gather}, {"reduce_scatter", m.reduce_scatter},         {"all_reduce", m.all_reduce},
      {"all_to_all", m.all_to_all}, {"collective_permute", m.collective_permute}, {"local_copy", m.local_copy}};
  for (auto const& [name, ab] : fits) s += std::format("{:<20} {:>12.2f} {:>16.2f}\n", name, ab.latency_us, ab.bandwidth_GBps);
  s += std::format("\n{:<20} {:>12} {:>14} {:>14}\n", "collective", "bytes", "measured_us", "model_us");
  for (auto const& p : c.points)
    s += std::format("{:<20} {:>12.0f} {:>14.1f} {:>14.1f}\n", p.collective, p.bytes, p.measured_us, p.fitted_us);
  return s;
}

}  // namespace tessel
