#pragma once
// Every kind of expression node, in one list: the one line that registers a new op. The list
// makes NodeKind, the planner's rule table (NAME_rules, plan/detail/rules.hpp) and the executor's
// kernel table (NAME_kernel, src/runtime/kernels/registry.cpp), so none of them can miss a kind.
//
// Each entry is the kind's name and how the executor makes its value:
//   leaf    - given by the call (a tensor, a C++ scalar): no step computes it;
//   region  - inside a fused kernel instantiated from the region's expression type
//             (runtime/region_kernels.hpp), so it can be read element by element in place;
//   kernel  - by an untyped kernel of its own, `void NAME_kernel(Plan const&, Step const&,
//             RunState&)` in src/runtime/kernels/NAME.cpp; a boundary of the regions around it;
//   reshard - by reshard steps alone (a sharding constraint).
//
// Adding an op computed by a kernel (cumsum, for example), named as the user calls it:
//   1. include/tessel/expr/cumsum.hpp: its tag (kind, Data, shape, name, describe, sign; node.hpp)
//      and the user function that builds the node, with its shape checks (expr/checks.hpp's
//      shared ones, e.g. detail::one_axis);
//   2. include/tessel/plan/detail/rules/cumsum.hpp: CumsumRules (OpRules: natural, assign, region,
//      materialize, work: what a device computes in its kernel step, plan/step_work.hpp), ending
//      with `inline constexpr CumsumRules cumsum_rules{};`, and its include line in
//      plan/detail/rules.hpp. Its materialize adds the op's steps; a step the op runs
//      itself beyond its kernel step (cumsum's carry: an exchange; argmax's all-reduce of values
//      and indices: a collective) is marked Step::by_op, so nothing else learns of the op;
//   3. src/runtime/kernels/cumsum.cpp: cumsum_kernel, which runs each of the op's by_op steps
//      (told apart by Step::kind); CMake picks the file up by its folder;
//   4. its line here, its include line in tessel.hpp, and its test, tests/expr/test_cumsum.cpp, with
//      a test case tagged [cumsum]. cmake/check_op_contract.cmake (CTest op_contract.complete) checks
//      that every op here has these pieces; the op's name is its one spelling: its files, rules,
//      kernel, step name (explain, traces, cost analysis) and tag.
// An op whose node needs attributes no kind has yet adds them to plan::GraphNode (plan/graph.hpp).
#include <cstdint>

#define TESSEL_OPS(OP)                                                                                       \
  OP(tensor, leaf)                                                                                           \
  OP(scalar, leaf)                                                                                           \
  OP(elementwise, region)                                                                                    \
  OP(reduce, region)                                                                                         \
  OP(constraint, reshard)                                                                                    \
  OP(dot, kernel)                                                                                            \
  OP(view, kernel)                                                                                           \
  OP(concatenate, kernel)                                                                                    \
  OP(iota, region)                                                                                           \
  OP(cumsum, kernel)                                                                                         \
  OP(take, kernel)                                                                                           \
  OP(arg_reduce, kernel)                                                                                     \
  OP(dynamic_slice, kernel)                                                                                  \
  OP(dynamic_update_slice, kernel)                                                                           \
  OP(top_k, kernel)                                                                                          \
  OP(manual_collective, kernel)

namespace tessel {

#define TESSEL_OP_ENUM(name, how) name,
enum class NodeKind : std::uint8_t { TESSEL_OPS(TESSEL_OP_ENUM) };
#undef TESSEL_OP_ENUM

#define TESSEL_OP_COUNT(name, how) +1
inline constexpr std::size_t node_kind_count = 0 TESSEL_OPS(TESSEL_OP_COUNT);
#undef TESSEL_OP_COUNT

// How the executor makes a kind's value (the list's second column).
enum class Computed : std::uint8_t { leaf, region, kernel, reshard };

constexpr Computed computed(NodeKind kind) {
  switch (kind) {
#define TESSEL_OP_COMPUTED(name, how) \
  case NodeKind::name: return Computed::how;
    TESSEL_OPS(TESSEL_OP_COMPUTED)
#undef TESSEL_OP_COMPUTED
  }
  return Computed::leaf;
}

}  // namespace tessel
