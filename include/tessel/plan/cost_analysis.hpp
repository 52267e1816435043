#pragma once
// What each instruction of a plan costs one device, as JAX's compiled.cost_analysis() reports it
// for a program: flops, bytes read and written, the cost model's estimated time, and for a
// collective its mesh axes and device groups (JAX prints them as replica_groups). explain prints
// it as a section after the instructions, explain_json gives it per step, and the trace
// (tools/trace.hpp) and profile (tools/profile.hpp) count the same quantities from the blocks a
// run actually made, by the same rules (the functions below).
#include <cstdint>
#include <string>
#include <vector>

#include "tessel/plan/plan.hpp"
#include "tessel/plan/step_work.hpp"

namespace tessel::plan {

struct InstructionCost {
  // The step's name (Step::name): "gemm", "fused", "reduce", "view_copy", an op kernel's op
  // ("cumsum", "take", "arg_reduce", ...), a collective's id ("all_reduce", "all_gather", ...),
  // "local_slice", "copy", "reshard", "view", an op's own exchange ("cumsum_carry").
  std::string kind;
  std::vector<std::string> ops;                  // kernels: the ops a region fuses, else the node's op
  std::int64_t batch = 0, m = 0, n = 0, k = 0;   // GEMMs (m > 0): each device multiplies batch (m x k) @ (k x n)
  double flops = 0;                              // per device (step_work)
  double bytes_read = 0, bytes_written = 0;      // per device: the blocks of the values read and made
                                                 // (for an uneven split, the largest block's)
  std::string blocks;                            // an uneven result's distinct block shapes, "3x64 or 1x64"
  double estimate_us = 0;                        // the cost model's: Step::estimate_us, plus for kernels
                                                 // its roofline (CostModel::kernel) of these flops and bytes
  std::vector<std::string> mesh_axes;            // collectives and exchanges: their groups' axes
  std::vector<std::vector<int>> groups;          // ... and the device ids of each group
  std::vector<int> devices;                      // the devices running it (those holding its result)
};

// One entry per plan step, in order.
std::vector<InstructionCost> cost_analysis(Plan const& plan);

// The device groups of a collective or exchange (one group of every device when it has no axes,
// as a permute between meshes), as device ids; empty for other steps.
std::vector<std::vector<int>> step_groups(Step const& step);
std::vector<std::string> step_axes(Step const& step);

// JAX's notation: {{0,1},{2,3}}.
std::string replica_groups_text(std::vector<std::vector<int>> const& groups);
// The section explain prints after the instructions (empty for a plan with no steps).
std::string cost_analysis_text(Plan const& plan);

}  // namespace tessel::plan
