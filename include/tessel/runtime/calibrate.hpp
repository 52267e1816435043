#pragma once
// Measuring the cost model once per machine: times each collective over a group of devices,
// from small buffers (latency) to large ones (bandwidth), and fits one (latency, bandwidth) pair
// per collective to the ring formulas of plan/cost_model.hpp. tessel_calibrate runs this and
// writes the result where plan::cost_model() reads it.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "tessel/plan/cost_model.hpp"

namespace tessel {

struct CalibrationOptions {
  // Bytes per device, in the sense of the collective's cost formula (all-gather: the gathered
  // block; the others: the block each device holds). Each must be a multiple of 4 * devices.
  std::vector<std::size_t> sizes{std::size_t{4} << 10, std::size_t{64} << 10, std::size_t{1} << 20,
                                 std::size_t{16} << 20, std::size_t{64} << 20};
  // Rounds over every configuration (the fastest run counts; buffers of 1 MB and less run 4 times
  // a round), after one untimed run of each.
  int repeats = 5;
};

// One timed configuration.
struct CalibrationPoint {
  std::string collective;  // the cost model file's entry name
  int devices;
  double bytes;            // per device, as above
  double steps, moved;     // the ring formula's message steps and bytes moved per device
  double measured_us;      // fastest run
  double fitted_us;        // the fitted model's estimate
};

struct Calibration {
  plan::CostModel model;
  std::vector<CalibrationPoint> points;
};

// Runs the in-process collectives on this process's devices (when it has at least 2) and, when
// there are several processes (mpirun), the collectives across processes with one device of each
// (the model's mpi_ entries; every process must call it; each point is the slowest process's).
// Entries it does not measure keep the values of plan::cost_model(). Throws tessel::Error naming
// the size that is not a multiple of 4 * devices (or processes), or the device count when one
// process has only one device.
Calibration calibrate(CalibrationOptions const& options = {});

// Fits time = steps * latency + moved / bandwidth: the bandwidth by least squares over all points
// (the large buffers decide it), then the latency from what it leaves of the smallest buffers'
// times (by least squares when there are several), clamped at 0.
plan::AlphaBeta fit_alpha_beta(std::span<double const> steps, std::span<double const> moved,
                               std::span<double const> us);

// The table tessel_calibrate prints: one line per collective with its fit, then every point.
std::string to_string(Calibration const& c);

}  // namespace tessel
