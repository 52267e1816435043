#pragma once
// The rules of every node kind, one constant object each (plan/detail/rules/<family>.hpp), made
// into rules_for from the op list (expr/op_list.hpp): a kind without its NAME_rules does not
// compile, naming it.
#include "tessel/plan/detail/rules/arg_reduce.hpp"
#include "tessel/plan/detail/rules/concatenate.hpp"
#include "tessel/plan/detail/rules/constraint.hpp"
#include "tessel/plan/detail/rules/dot.hpp"
#include "tessel/plan/detail/rules/dynamic_slice.hpp"
#include "tessel/plan/detail/rules/top_k.hpp"
#include "tessel/plan/detail/rules/elementwise.hpp"
#include "tessel/plan/detail/rules/take.hpp"
#include "tessel/plan/detail/rules/iota.hpp"
#include "tessel/plan/detail/rules/leaves.hpp"
#include "tessel/plan/detail/rules/manual_collective.hpp"
#include "tessel/plan/detail/rules/reduce.hpp"
#include "tessel/plan/detail/rules/cumsum.hpp"
#include "tessel/plan/detail/rules/view.hpp"

namespace tessel::plan {

constexpr OpRules const& rules_for(NodeKind kind) {
  switch (kind) {
#define TESSEL_RULES_CASE(name, how) \
  case NodeKind::name: return name##_rules;
    TESSEL_OPS(TESSEL_RULES_CASE)
#undef TESSEL_RULES_CASE
  }
  return tensor_rules;
}

}  // namespace tessel::plan
