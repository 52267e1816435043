// The rules of every node kind, made from the op list (expr/op_list.hpp): a kind without its
// NAME_rules() fails to link, naming the function.
#include <array>

#include "../planner.hpp"

namespace tessel::plan {

OpRules const& rules_for(NodeKind kind) {
  using Get = OpRules const& (*)();
#define TESSEL_RULES_ENTRY(name, how) &name##_rules,
  static constexpr std::array<Get, node_kind_count> table{TESSEL_OPS(TESSEL_RULES_ENTRY)};
#undef TESSEL_RULES_ENTRY
  return table[static_cast<std::size_t>(kind)]();
}

}  // namespace tessel::plan
