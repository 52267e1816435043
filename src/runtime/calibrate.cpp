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

double fastest_us(int repeats, std::function<void()> const& run) {
  std::vector<double> us;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    run();  // every collective fences all devices before it returns
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
  }
  // The fastest run: other processes' interference only ever adds time.
  return *std::min_element(us.begin(), us.end());
}

}  // namespace

plan::AlphaBeta fit_alpha_beta(std::span<double const> steps, std::span<double const> moved,
                               std::span<double const> us) {
  // Real times are not linear in the bytes (small buffers stay in cache), so one fit would trade
  // the latency off against the bandwidth. The bandwidth comes from the plain least-squares fit of
  // us ~ steps * a + moved * g, which the large buffers dominate; the latency from what that
  // bandwidth leaves of the smallest buffers' times.
  double ss = 0, sm = 0, mm = 0, st = 0, mt = 0;
  for (std::size_t i = 0; i < us.size(); ++i) {
    ss += steps[i] * steps[i];
    sm += steps[i] * moved[i];
    mm += moved[i] * moved[i];
    st += steps[i] * us[i];
    mt += moved[i] * us[i];
  }
  double det = ss * mm - sm * sm;
  double g = std::abs(det) > 1e-12 * ss * mm ? (ss * mt - sm * st) / det : (mm > 0 ? mt / mm : 0);
  if (g <= 0) g = 1e-9;  // no measurable byte cost: a bandwidth of 10^6 GB/s
  double smallest = us.empty() ? 0 : *std::min_element(moved.begin(), moved.end());
  double num = 0, den = 0;
  for (std::size_t i = 0; i < us.size(); ++i)
    if (moved[i] == smallest) {
      num += steps[i] * (us[i] - moved[i] * g);
      den += steps[i] * steps[i];
    }
  double a = den > 0 ? std::max(0.0, num / den) : 0;
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

  // The boxes of each size, kept alive for the runs below.
  struct SizeBoxes {
    std::int64_t e;
    std::vector<Box> slices, wholes, rows, cols;
    std::vector<PermutePair> shift, self;
  };
  std::vector<SizeBoxes> boxes;
  for (std::size_t s : options.sizes) {
    SizeBoxes x{static_cast<std::int64_t>(s / 4), {}, {}, {}, {}, {}, {}};  // float32 elements per device
    std::int64_t e = x.e;
    for (int k = 0; k < n; ++k) {
      x.slices.push_back(range(k * e / n, (k + 1) * e / n));
      x.wholes.push_back(range(0, e));
      x.rows.push_back(rect({k, k + 1}, {0, e}));
      x.cols.push_back(rect({0, n}, {k * e / n, (k + 1) * e / n}));
      x.shift.push_back({k, (k + 1) % n});
      x.self.push_back({k, k});
    }
    boxes.push_back(std::move(x));
  }
  std::vector<std::function<void()>> runs;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    SizeBoxes const& x = boxes[i];
    auto b = static_cast<double>(options.sizes[i]);
    auto add = [&](char const* name, double steps, double moved, std::function<void()> run) {
      result.points.push_back({name, n, b, steps, moved, 0, 0});
      runs.push_back(std::move(run));
    };
    add("all_gather", ring, frac * b, [&c, &group, &x] { c.all_gather(DType::float32, group, x.slices); });
    add("reduce_scatter", ring, frac * b, [&c, &group, &x] {
      c.reduce_scatter(DType::float32, ReduceOp::sum, group, range(0, x.e), x.slices);
    });
    add("all_reduce", 2 * ring, 2 * frac * b,
        [&c, &group, &x] { c.all_reduce(DType::float32, ReduceOp::sum, group, range(0, x.e)); });
    add("all_to_all", ring, frac * b, [&c, &group, &x] { c.all_to_all(DType::float32, group, x.rows, x.cols); });
    add("collective_permute", 1, b,
        [&c, &group, &x] { c.collective_permute(DType::float32, group, x.wholes, x.wholes, x.shift); });
    add("local_copy", 1, b,
        [&c, &group, &x] { c.collective_permute(DType::float32, group, x.wholes, x.wholes, x.self); });
  }
  // Rounds over every configuration, keeping each one's fastest run: interference from other
  // processes then has to hit every round of a configuration to show. Small buffers take
  // microseconds, where one descheduling shows, so they run several times per round.
  for (auto& run : runs) run();  // untimed: first touch of the buffers, kernel set-up
  std::vector<double> best(runs.size(), 1e300);
  for (int round = 0; round < options.repeats; ++round)
    for (std::size_t j = 0; j < runs.size(); ++j)
      best[j] = std::min(best[j], fastest_us(result.points[j].bytes <= (1 << 20) ? 4 : 1, runs[j]));
  for (std::size_t j = 0; j < runs.size(); ++j) result.points[j].measured_us = best[j];

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
