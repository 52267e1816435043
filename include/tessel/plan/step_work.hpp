#pragma once
// What one device computes in a kernel step, as each op's rules declare it (OpRules::work):
// cost_analysis, the trace and the profile ask the step's op, so none of them names an op.
#include <cstdint>
#include <optional>
#include <vector>

#include "tessel/core/shape.hpp"
#include "tessel/expr/dot.hpp"
#include "tessel/plan/plan.hpp"

namespace tessel::plan {

// One device's GEMM problem: batch (m x k) @ (k x n).
struct GemmDims {
  std::int64_t batch = 1, m = 1, n = 1, k = 1;
};

// Each device's GEMM problem, from the dot's dimension numbers, its lhs block and result block.
constexpr GemmDims gemm_dims(DotDims const& dims, Shape const& lhs_block, Shape const& out_block) {
  GemmDims g;
  std::size_t const nb = dims.lhs_batch.size();
  std::size_t const lhs_free = lhs_block.size() - nb - dims.lhs_contract.size();
  for (std::size_t d = 0; d < out_block.size(); ++d) (d < nb ? g.batch : d < nb + lhs_free ? g.m : g.n) *= out_block[d];
  for (auto c : dims.lhs_contract) g.k *= lhs_block[c];
  return g;
}

// The blocks one device's run of a step reads (its tensor operands, in order; scalars left out)
// and makes. For an uneven split, cost_analysis gives the largest block, a trace the device's own.
struct StepBlocks {
  std::vector<Shape> reads;
  std::optional<Shape> made;

  [[nodiscard]] constexpr std::int64_t largest() const {
    std::int64_t e = made ? made->num_elements() : 0;
    for (auto const& r : reads) e = e < r.num_elements() ? r.num_elements() : e;
    return e;
  }
  [[nodiscard]] constexpr std::int64_t first_read() const { return reads.empty() ? 0 : reads.front().num_elements(); }
};

// What the step computes: flops by XLA's counting (an elementwise op is one flop per element), and
// a GEMM's problem.
struct StepWork {
  double flops = 0;
  std::optional<GemmDims> gemm;
  // An op that writes into its first operand's buffers (dynamic_update_slice of a donated
  // operand, runtime/donate.hpp): the elements of its result it writes. It then reads its other
  // operands and writes that many elements, not the whole result, as XLA's cost analysis counts
  // an in-place dynamic-update-slice.
  std::optional<std::int64_t> updates_in_place;
  // A gather or a slice (take, dynamic_slice): the elements of its first operand it reads, those it
  // hands on, not the whole block, as XLA's cost analysis counts gather and dynamic-slice.
  std::optional<std::int64_t> reads_of_first;
};

// The counting rules the ops share.
namespace counting {
// A fused region: one flop per op per element of the largest block it reads or writes.
constexpr StepWork per_op_element(std::size_t ops, StepBlocks const& b) {
  StepWork w;
  w.flops = static_cast<double>(ops) * static_cast<double>(b.largest());
  return w;
}
// A pass over its operand (a scan, a selection): one flop per element read.
constexpr StepWork per_element_read(StepBlocks const& b) {
  StepWork w;
  w.flops = static_cast<double>(b.first_read());
  return w;
}
// Data movement (copies, gathers, slices): none.
constexpr StepWork none() { return {}; }
}  // namespace counting

// What one device computes in a step, as the step's op declares it (its rules' work; defined with
// the planner, src/plan/planner.cpp): nothing for a step that is not a kernel (reshards,
// collectives and exchanges move data).
StepWork step_work(Plan const& plan, Step const& step, StepBlocks const& blocks);

}  // namespace tessel::plan
