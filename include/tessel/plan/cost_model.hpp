#pragma once
// An alpha-beta cost model: a collective costs a latency per message step plus its bytes over a
// bandwidth, with one (latency, bandwidth) pair per collective, since an all-reduce, an all-gather
// and a permute differ in more than their formulas (kernels, synchronization, combining). The
// planner uses it to choose between legal shardings; explain prints its estimates. The defaults
// are a guess; `tessel_calibrate` measures this machine and writes a file that cost_model() reads.
#include <cstddef>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "tessel/core/named_sharding.hpp"
#include "tessel/core/shape.hpp"
#include "tessel/plan/reshard.hpp"

namespace tessel::plan {

// Devices per process when the program runs as several processes (the runtime sets it when it
// starts them), else 0: which collectives' groups cross processes (CostModel::over).
void set_devices_per_process(int devices);
int devices_per_process();

struct AlphaBeta {
  double latency_us = 5.0;       // alpha: per message step
  double bandwidth_GBps = 10.0;  // beta^-1: per device link

  [[nodiscard]] constexpr double us(double bytes, double steps) const {
    return steps * latency_us + bytes / (bandwidth_GBps * 1e3);
  }
  friend bool operator==(AlphaBeta const&, AlphaBeta const&) = default;
};

// A kernel (a fused region, a reduction, a GEMM) on one device: a launch latency, then its bytes
// at the memory bandwidth or its flops at the compute peak, whichever takes longer (a roofline).
// Per device: where logical devices share one host's cores and memory, each has its share of them
// (calibrate with the cost model file's kernel line: ./tessel study measures the STREAM triad and
// the SGEMM peak; divide them by the devices that share them).
struct Roofline {
  double launch_us = 2.0;
  double bandwidth_GBps = 10.0;
  double GFLOPps = 100.0;

  [[nodiscard]] constexpr double us(double flops, double bytes) const {
    double memory = bytes / (bandwidth_GBps * 1e3), compute = flops / (GFLOPps * 1e3);
    return launch_us + (memory > compute ? memory : compute);
  }
  friend bool operator==(Roofline const&, Roofline const&) = default;
};

struct CostModel {
  double latency_us = 5.0;        // point-to-point transfers (a generic reshard by copies)
  double bandwidth_GBps = 10.0;
  AlphaBeta all_gather, reduce_scatter, all_reduce, all_to_all, collective_permute;
  // A local slice copies within a device; free by default (as it was before there were
  // measurements), a memory pass once calibrated.
  AlphaBeta local_copy{0.0, std::numeric_limits<double>::infinity()};
  // The same collectives when a group spans processes (MPI between processes), priced apart from
  // the in-process ones: `tessel calibrate` measures them under mpirun. The defaults are a guess
  // for processes on one host (MPI's latency, a copy through shared memory).
  AlphaBeta mpi_all_gather{20.0, 5.0}, mpi_reduce_scatter{20.0, 5.0}, mpi_all_reduce{20.0, 5.0},
      mpi_all_to_all{20.0, 5.0}, mpi_collective_permute{20.0, 5.0};

  [[nodiscard]] constexpr double transfer_us(double bytes, int steps = 1) const {
    return AlphaBeta{latency_us, bandwidth_GBps}.us(bytes, steps);
  }
  // Ring algorithms over a group of n devices, `bytes` per device: all-reduce and reduce-scatter,
  // the input block; all-gather, the gathered block; all-to-all, the block each device holds
  // (sent in n - 1 pieces, one step each); collective-permute, one block in one step.
  [[nodiscard]] constexpr double all_reduce_us(double bytes, int n) const {
    return n <= 1 ? 0 : all_reduce.us(2.0 * (n - 1) / n * bytes, 2 * (n - 1));
  }
  [[nodiscard]] constexpr double reduce_scatter_us(double bytes, int n) const {
    return n <= 1 ? 0 : reduce_scatter.us(1.0 * (n - 1) / n * bytes, n - 1);
  }
  [[nodiscard]] constexpr double all_gather_us(double bytes, int n) const {
    return n <= 1 ? 0 : all_gather.us(1.0 * (n - 1) / n * bytes, n - 1);
  }
  [[nodiscard]] constexpr double all_to_all_us(double bytes, int n) const {
    return n <= 1 ? 0 : all_to_all.us(1.0 * (n - 1) / n * bytes, n - 1);
  }
  [[nodiscard]] constexpr double collective_permute_us(double bytes) const { return collective_permute.us(bytes, 1); }
  [[nodiscard]] constexpr double local_copy_us(double bytes) const { return bytes > 0 ? local_copy.us(bytes, 1) : 0; }

  // Kernels are priced for explain's cost analysis and profile's meas/est only: the planner
  // chooses between plans by their communication, which is where legal plans differ.
  Roofline kernel;
  [[nodiscard]] constexpr double kernel_us(double flops, double bytes) const { return kernel.us(flops, bytes); }

  // This model as it prices collectives over `axes` of `mesh` (no axes: one group of every
  // device): with the mpi_ entries in place of the in-process ones when one of their groups
  // spans processes (devices_per_process()); unchanged otherwise.
  [[nodiscard]] CostModel over(Mesh const& mesh, ShardLayout::AxisList const& axes) const;

  // One step of a classified reshard, and a whole reshard (the sum of its steps). In a constant
  // expression (a plan made at compile time) no group spans processes.
  [[nodiscard]] constexpr double reshard_us(ReshardStep const& s) const;
  [[nodiscard]] constexpr double reshard_us(std::span<ReshardStep const> steps) const {
    double us = 0;
    for (auto const& s : steps) us += reshard_us(s);
    return us;
  }

  friend bool operator==(CostModel const&, CostModel const&) = default;
};

constexpr double CostModel::reshard_us(ReshardStep const& s) const {
  if (!s.collective) return s.copy ? (s.bytes > 0 ? transfer_us(s.bytes) : 0) : local_copy_us(s.bytes);
  if (!std::is_constant_evaluated() && devices_per_process() > 0) {
    CostModel const m = over(s.from.mesh(), s.axes);
    if (!(m == *this)) return m.reshard_us(s);
  }
  switch (*s.collective) {
    case Collective::all_gather: return all_gather_us(s.bytes, s.group);
    case Collective::all_to_all: return all_to_all_us(s.bytes, s.group);
    case Collective::collective_permute: return collective_permute_us(s.bytes);
    case Collective::all_reduce: return all_reduce_us(s.bytes, s.group);
    case Collective::reduce_scatter: return reduce_scatter_us(s.bytes, s.group);
  }
  return 0;
}

// The model in force. On first use it reads the file at cost_model_path() when there is one (a
// malformed file throws tessel::Error naming the file, line and field, and the defaults stay).
CostModel& cost_model();
// Which model cost_model() is: "defaults", or "calibrated, from PATH", or "set in code (over
// ...)" once a program has changed the model cost_model() returns (what explain prints).
std::string cost_model_source();
// Reads the file again (after tessel_calibrate wrote it, or the path changed); defaults when there
// is no file. Throws as cost_model() does, leaving the model in force unchanged.
void reload_cost_model();


// $TESSEL_COST_MODEL; else $XDG_CACHE_HOME/tessel/cost_model.txt; else
// ~/.cache/tessel/cost_model.txt. None when TESSEL_COST_MODEL is set but empty (the tests use
// that: their plans must not depend on a calibrated machine) or no home is known.
std::optional<std::string> cost_model_path();
// The text format: '#' comments, then one line per entry, "name latency_us bandwidth_GBps", names
// transfer, all_gather, reduce_scatter, all_reduce, all_to_all, collective_permute, local_copy,
// and the same five collectives across processes, mpi_all_gather ... mpi_collective_permute;
// and "kernel launch_us bandwidth_GBps GFLOPps" for the kernels' roofline. Entries left out keep
// their defaults.
CostModel read_cost_model(std::string const& path);
void write_cost_model(CostModel const& model, std::string const& path);  // creates the folder
std::string to_string(CostModel const& model);                            // the file's text

// Bytes that must cross between devices to turn a tensor of this shape from one sharding into
// another: each destination shard's elements minus those its own device already holds.
std::size_t reshard_bytes(Shape const& shape, std::size_t element_bytes, NamedSharding const& from,
                          NamedSharding const& to);

}  // namespace tessel::plan
