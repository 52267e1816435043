#pragma once
// Every kind of expression node, in one list: the one line that registers a new op. The list
// makes NodeKind, the planner's rule table (NAME_rules(), src/plan/rules/) and the executor's
// kernel table (NAME_kernel, src/runtime/kernels/), so none of them can miss a kind.
//
// Each entry is the kind's name and how the executor makes its value:
//   leaf    - given by the call (a tensor, a C++ scalar): no step computes it;
//   region  - inside a fused kernel instantiated from the region's expression type
//             (runtime/region_kernels.hpp), so it can be read element by element in place;
//   kernel  - by an untyped kernel of its own, `void NAME_kernel(Plan const&, Step const&,
//             RunState&)` in src/runtime/kernels/NAME.cpp; a boundary of the regions around it;
//   moves   - by reshard steps alone (a sharding constraint).
//
// Adding an op (take, for example):
//   1. include/tessel/expr/take.hpp: its tag (kind, Data, shape, name, describe, sign; node.hpp)
//      and the user function that builds the node (shape checks in src/expr/checks.cpp);
//   2. src/plan/rules/gather.cpp: its sharding rule and its steps (OpRules, ending with
//      TESSEL_RULES(gather, GatherRules));
//   3. src/runtime/kernels/gather.cpp: gather_kernel (only for `kernel` ops);
//   and one line here. CMake picks up the two .cpp files by their folders.
#include <cstdint>

#define TESSEL_OPS(OP)                                                                                       \
  OP(tensor, leaf)                                                                                           \
  OP(scalar, leaf)                                                                                           \
  OP(elementwise, region)                                                                                    \
  OP(reduce, region)                                                                                         \
  OP(constraint, moves)                                                                                      \
  OP(dot, kernel)                                                                                            \
  OP(view, kernel)                                                                                           \
  OP(concatenate, kernel)                                                                                    \
  OP(iota, region)                                                                                           \
  OP(scan, kernel)                                                                                           \
  OP(gather, kernel)                                                                                         \
  OP(argreduce, kernel)                                                                                      \
  OP(manual_collective, kernel)

namespace tessel {

#define TESSEL_OP_ENUM(name, how) name,
enum class NodeKind : std::uint8_t { TESSEL_OPS(TESSEL_OP_ENUM) };
#undef TESSEL_OP_ENUM

#define TESSEL_OP_COUNT(name, how) +1
inline constexpr std::size_t node_kind_count = 0 TESSEL_OPS(TESSEL_OP_COUNT);
#undef TESSEL_OP_COUNT

// How the executor makes a kind's value (the list's second column).
enum class Computed : std::uint8_t { leaf, region, kernel, moves };

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
