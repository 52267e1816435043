#pragma once
// How values combine in a reduction and in the collective that completes it: one vocabulary from
// the op tag (expr/ops.hpp: each reduction names its combiner) through the plan's collectives to
// the Collectives interface.
#include <cstdint>

namespace tessel {

enum class ReduceOp : std::uint8_t { sum, prod, max, min };

constexpr char const* name(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return "sum";
    case ReduceOp::prod: return "prod";
    case ReduceOp::max: return "max";
    case ReduceOp::min: return "min";
  }
  return "?";
}

// Calls f.template operator()<Op>() with `op` as a template argument: how type-erased code runs
// a kernel instantiated for the combine.
template <class F>
constexpr decltype(auto) visit(ReduceOp op, F&& f) {
  switch (op) {
    case ReduceOp::sum: return f.template operator()<ReduceOp::sum>();
    case ReduceOp::prod: return f.template operator()<ReduceOp::prod>();
    case ReduceOp::max: return f.template operator()<ReduceOp::max>();
    case ReduceOp::min: break;
  }
  return f.template operator()<ReduceOp::min>();
}

}  // namespace tessel
