// The rules of every node kind. Adding a family: its rules file and one line here.
#include <array>

#include "../planner.hpp"

namespace tessel::plan {

OpRules const& rules_for(NodeKind kind) {
  using Get = OpRules const& (*)();
  // In NodeKind's order.
  static constexpr std::array<Get, 12> table{&tensor_rules, &scalar_rules,      &elementwise_rules, &reduce_rules,
                                             &constraint_rules, &dot_rules, &view_rules, &concatenate_rules,
                                             &iota_rules, &scan_rules, &gather_rules, &arg_reduce_rules};
  static_assert(static_cast<std::size_t>(NodeKind::argreduce) + 1 == table.size(),
                "tessel: every NodeKind needs its rules in this table");
  return table[static_cast<std::size_t>(kind)]();
}

}  // namespace tessel::plan
