// The untyped kernel of every node kind computed by `kernel`, made from the op list
// (expr/op_list.hpp).
#include <array>

#include "kernel.hpp"

namespace tessel::detail {

KernelFn kernel_for(NodeKind kind) {
#define TESSEL_KERNEL_ENTRY_leaf(name) nullptr
#define TESSEL_KERNEL_ENTRY_region(name) nullptr
#define TESSEL_KERNEL_ENTRY_reshard(name) nullptr
#define TESSEL_KERNEL_ENTRY_kernel(name) &name##_kernel
#define TESSEL_KERNEL_ENTRY(name, how) TESSEL_KERNEL_ENTRY_##how(name),
  static constexpr std::array<KernelFn, node_kind_count> table{TESSEL_OPS(TESSEL_KERNEL_ENTRY)};
#undef TESSEL_KERNEL_ENTRY
  return table[static_cast<std::size_t>(kind)];
}

}  // namespace tessel::detail
