// dot_general's kernel: every device's blocks multiplied by BLAS GEMM (runtime/local_dot.hpp),
// leaving the partial products the plan's all-reduce or reduce-scatter (if any) completes.
#include "kernel.hpp"
#include "tessel/runtime/local_dot.hpp"

namespace tessel::detail {

void dot_kernel(plan::Plan const& plan, plan::Step const& step, RunState& state) {
  KernelArgs const k{plan, step, state};
  // The result's dtype is the node's: the operands' promoted one or a preferred_element_type.
  auto partial = TensorImpl::allocate(k.node().shape, dtype_named(k.node().dtype), *k.node_plan().partial);
  local_dot(*k.operand(0), *k.operand(1), k.node().dot, *partial);
  k.result(std::move(partial));
}

}  // namespace tessel::detail
