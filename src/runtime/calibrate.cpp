#include "tessel/runtime/calibrate.hpp"
#include "tessel/runtime/stream.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <format>
#include <bit>
#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tessel/core/device_count.hpp"
#include "tessel/core/error.hpp"
#include "tessel/runtime/collectives.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/distributed.hpp"
#include "distributed/world.hpp"

namespace tessel {
namespace {

using Buffer = Kokkos::View<std::byte*, MemSpace>;

Box range(std::int64_t start, std::int64_t stop) { return Box{{start, stop}}; }
Box rect(IndexRange rows, IndexRange cols) { return Box{rows, cols}; }

// Times `run` (a collective over the devices `ids` of this process) to its end on those devices.
double fastest_us(int repeats, std::span<int const> ids, std::function<void()> const& before,
                  std::function<void()> const& run) {
  std::vector<double> us;
  for (int r = 0; r < repeats; ++r) {
    if (before) before();
    auto t0 = std::chrono::steady_clock::now();
    run();
    detail::fence_devices(ids);  // (a collective is ordered on the devices' queues: it ends when they are done)
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

namespace {

// The collectives of one group timed at every size, as points named `prefix` + the cost model's
// entry (and a local copy, when `local_copy`). Member k is device ids[k]; a member of another
// process has no buffers (the collectives across processes take every process's call).
// `before` runs before each timed run (processes start a run together).
void measure(Collectives& c, std::vector<int> const& ids, std::string const& prefix, bool local_copy,
             CalibrationOptions const& options, std::function<void()> const& before, Calibration& result) {
  int const n = static_cast<int>(ids.size());
  std::size_t largest = *std::max_element(options.sizes.begin(), options.sizes.end());
  std::vector<Buffer> in, out;
  std::vector<GroupMember> group;
  std::vector<int> local;  // this process's members' devices
  for (int id : ids) {
    if (!is_local_device(id)) {
      group.push_back({id, nullptr, nullptr});
      continue;
    }
    if (std::find(local.begin(), local.end(), id) == local.end()) local.push_back(id);
    in.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessel::calibrate_in"), largest);
    out.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessel::calibrate_out"), largest);
    Kokkos::deep_copy(in.back(), std::byte{0});  // zeros: valid floats to reduce
    group.push_back({id, in.back().data(), out.back().data()});
  }
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
  std::size_t const first = result.points.size();
  std::vector<std::function<void()>> runs;
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    SizeBoxes const& x = boxes[i];
    auto b = static_cast<double>(options.sizes[i]);
    auto add = [&](char const* name, double steps, double moved, std::function<void()> run) {
      result.points.push_back({prefix + name, n, b, steps, moved, 0, 0});
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
    if (local_copy)
      add("local_copy", 1, b,
          [&c, &group, &x] { c.collective_permute(DType::float32, group, x.wholes, x.wholes, x.self); });
  }
  // Rounds over every configuration, keeping each one's fastest run: interference from other
  // processes then has to hit every round of a configuration to show. Small buffers take
  // microseconds, where one descheduling shows, so they run several times per round.
  for (auto& run : runs) run();  // untimed: first touch of the buffers, kernel set-up, communicators
  std::vector<double> best(runs.size(), 1e300);
  for (int round = 0; round < options.repeats; ++round)
    for (std::size_t j = 0; j < runs.size(); ++j)
      best[j] = std::min(best[j], fastest_us(result.points[first + j].bytes <= (1 << 20) ? 4 : 1, local, before, runs[j]));
  for (std::size_t j = 0; j < runs.size(); ++j) result.points[first + j].measured_us = best[j];
  detail::fence_devices(local);  // (the buffers go when this returns)
}

// Fits each named collective's points into its model entry.
void fit(Calibration& result, std::span<std::pair<std::string, plan::AlphaBeta*> const> fits) {
  for (auto const& [name, ab] : fits) {
    std::vector<double> steps, moved, us;
    for (auto const& p : result.points)
      if (p.collective == name) {
        steps.push_back(p.steps);
        moved.push_back(p.moved);
        us.push_back(p.measured_us);
      }
    if (us.empty()) continue;
    *ab = fit_alpha_beta(steps, moved, us);
    for (auto& p : result.points)
      if (p.collective == name) p.fitted_us = ab->us(p.moved, p.steps);
  }
}

void check_sizes(CalibrationOptions const& options, int n, char const* what) {
  for (std::size_t s : options.sizes)
    if (s == 0 || s % (4 * static_cast<std::size_t>(n)) != 0)
      throw Error(std::format("calibrate: size {} bytes is not a positive multiple of 4 * {} {} = {} bytes", s, n,
                              what, 4 * n));
}

}  // namespace

Calibration calibrate(CalibrationOptions const& options) {
  int const local = local_device_count(), processes = distributed::process_count();
  if (local < 2 && processes < 2)
    throw Error(std::format("calibrate: this process has {} device; collectives need at least 2 (set "
                            "TESSEL_NUM_DEVICES or set_device_count)",
                            local));
  if (local >= 2) check_sizes(options, local, "devices");
  if (processes >= 2) check_sizes(options, processes, "processes");
  Calibration result;
  result.model = plan::cost_model();  // entries not measured here keep the values in force
  plan::CostModel& m = result.model;
  // In process: this process's devices (every process at once, under mpirun, as a run's are).
  if (local >= 2) {
    measure(in_process_collectives(), distributed::local_devices(), "", true, options, nullptr, result);
    std::pair<std::string, plan::AlphaBeta*> fits[] = {
        {"all_gather", &m.all_gather}, {"reduce_scatter", &m.reduce_scatter},         {"all_reduce", &m.all_reduce},
        {"all_to_all", &m.all_to_all}, {"collective_permute", &m.collective_permute}, {"local_copy", &m.local_copy}};
    fit(result, fits);
    // Point-to-point copies (a generic reshard) move like a permute.
    m.latency_us = m.collective_permute.latency_us;
    m.bandwidth_GBps = m.collective_permute.bandwidth_GBps;
  }
  // Across processes (under mpirun): one device of each process, over MPI. The processes start
  // each run together, and a point's time is the slowest process's.
  if (processes >= 2) {
    std::vector<int> ids;
    for (int p = 0; p < processes; ++p) ids.push_back(p * local);
    std::size_t const first = result.points.size();
    measure(collectives(), ids, "mpi_", false, options, [] { distributed::all_gather_word(0); }, result);
    for (std::size_t j = first; j < result.points.size(); ++j) {
      double& us = result.points[j].measured_us;
      for (auto bits : distributed::all_gather_word(std::bit_cast<unsigned long long>(us)))
        us = std::max(us, std::bit_cast<double>(bits));
    }
    std::pair<std::string, plan::AlphaBeta*> fits[] = {{"mpi_all_gather", &m.mpi_all_gather},
                                                       {"mpi_reduce_scatter", &m.mpi_reduce_scatter},
                                                       {"mpi_all_reduce", &m.mpi_all_reduce},
                                                       {"mpi_all_to_all", &m.mpi_all_to_all},
                                                       {"mpi_collective_permute", &m.mpi_collective_permute}};
    fit(result, fits);
  }
  return result;
}

std::string to_string(Calibration const& c) {
  plan::CostModel m = c.model;
  auto is_mpi = [](CalibrationPoint const& p) { return p.collective.starts_with("mpi_"); };
  auto line = [](std::string const& name, plan::AlphaBeta ab) {
    return std::format("{:<24} {:>12.2f} {:>16.2f}\n", name, ab.latency_us, ab.bandwidth_GBps);
  };
  std::string s;
  auto in_process = std::find_if_not(c.points.begin(), c.points.end(), is_mpi);
  if (in_process != c.points.end()) {
    s += std::format("in-process collectives on {} devices (ring formulas, per-device bytes)\n", in_process->devices);
    s += std::format("{:<24} {:>12} {:>16}\n", "collective", "latency_us", "bandwidth_GBps");
    std::pair<char const*, plan::AlphaBeta> fits[] = {
        {"all_gather", m.all_gather}, {"reduce_scatter", m.reduce_scatter},         {"all_reduce", m.all_reduce},
        {"all_to_all", m.all_to_all}, {"collective_permute", m.collective_permute}, {"local_copy", m.local_copy}};
    for (auto const& [name, ab] : fits) s += line(name, ab);
  }
  auto across = std::find_if(c.points.begin(), c.points.end(), is_mpi);
  if (across != c.points.end()) {
    s += std::format("{}collectives across {} processes, one device each (MPI; ring formulas, per-device bytes)\n",
                     s.empty() ? "" : "\n", across->devices);
    s += std::format("{:<24} {:>12} {:>16}\n", "collective", "latency_us", "bandwidth_GBps");
    std::pair<char const*, plan::AlphaBeta> fits[] = {{"mpi_all_gather", m.mpi_all_gather},
                                                      {"mpi_reduce_scatter", m.mpi_reduce_scatter},
                                                      {"mpi_all_reduce", m.mpi_all_reduce},
                                                      {"mpi_all_to_all", m.mpi_all_to_all},
                                                      {"mpi_collective_permute", m.mpi_collective_permute}};
    for (auto const& [name, ab] : fits) s += line(name, ab);
  }
  s += std::format("\n{:<24} {:>10} {:>14} {:>14}\n", "collective", "bytes", "measured_us", "model_us");
  for (auto const& p : c.points)
    s += std::format("{:<24} {:>10.0f} {:>14.1f} {:>14.1f}\n", p.collective, p.bytes, p.measured_us, p.fitted_us);
  return s;
}

}  // namespace tessel
