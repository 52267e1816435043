#pragma once
// An alpha-beta cost model: a collective or reshard costs a latency per step plus its bytes over a
// bandwidth. The planner uses it to choose between legal shardings; explain prints its estimates.
#include <cstddef>

#include "tessel/core/named_sharding.hpp"
#include "tessel/core/shape.hpp"

namespace tessel::plan {

struct CostModel {
  double latency_us = 5.0;        // alpha: per message step
  double bandwidth_GBps = 10.0;   // beta^-1: per device link

  [[nodiscard]] double transfer_us(double bytes, int steps = 1) const {
    return steps * latency_us + bytes / (bandwidth_GBps * 1e3);
  }
  // Ring algorithms over a group of n devices, `bytes` per device.
  [[nodiscard]] double all_reduce_us(double bytes, int n) const {
    return n <= 1 ? 0 : transfer_us(2.0 * (n - 1) / n * bytes, 2 * (n - 1));
  }
  [[nodiscard]] double reduce_scatter_us(double bytes, int n) const {
    return n <= 1 ? 0 : transfer_us(1.0 * (n - 1) / n * bytes, n - 1);
  }
};

// The model in force (settable, e.g. from a measurement of this machine).
CostModel& cost_model();

// Bytes that must cross between devices to turn a tensor of this shape from one sharding into
// another: each destination shard's elements minus those its own device already holds.
std::size_t reshard_bytes(Shape const& shape, std::size_t element_bytes, NamedSharding const& from,
                          NamedSharding const& to);

}  // namespace tessel::plan
