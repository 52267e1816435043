#pragma once
// A GEMM step's operand read in place through a view (Step::through_view, DotRules::materialize):
// the view, and the sharding whose blocks the GEMM reads. The dot kernel, cost_analysis and the
// trace ask here.
#include <cstddef>

#include "tessel/plan/plan.hpp"

namespace tessel::plan {

// The view node operand k of `step` is read through, or -1.
constexpr int viewed_operand(Step const& step, std::size_t k) {
  return k < step.through_view.size() ? step.through_view[k] : -1;
}

// The view's own sharding: its blocks are what the GEMM reads of its operand's shards.
inline NamedSharding const& view_sharding(Plan const& plan, int view) {
  return *plan.nodes[static_cast<std::size_t>(view)].after_collective;
}

}  // namespace tessel::plan
