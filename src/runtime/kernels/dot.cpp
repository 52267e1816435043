// dot_general's kernel: every device's blocks multiplied by BLAS GEMM (runtime/local_dot.hpp),
// leaving the partial products the plan's all-reduce or reduce-scatter (if any) completes (in
// float32 for a 16-bit result: the executor rounds them once after it).
#include "kernel.hpp"
#include "tessel/plan/viewed_operand.hpp"
#include "tessel/runtime/local_dot.hpp"

namespace tessel::detail {

void dot_kernel(plan::Plan const& plan, plan::Step const& step, RunState& state) {
  KernelArgs const k{plan, step, state};
  // The result's dtype is the node's: the operands' promoted one or a preferred_element_type. A
  // 16-bit result whose contraction is split keeps its partial sums in float32 (the GEMM's own
  // accumulator) through the all-reduce, which rounds them once: the mesh then changes only the
  // order of float32 additions, not how often the sum is rounded to 16 bits.
  DType dtype = dtype_named(k.node().dtype);
  if (k.node_plan().collective && (dtype == DType::bfloat16 || dtype == DType::float16)) dtype = DType::float32;
  auto partial = TensorImpl::allocate(k.node().shape, dtype, *k.node_plan().partial);
  // An operand read through a view (plan::Step::through_view) is that view's operand: the GEMM
  // multiplies the view's blocks within it.
  auto operand = [&](std::size_t i) {
    int const v = plan::viewed_operand(step, i);
    if (v < 0) return DotOperand{*k.operand(i)};
    auto const& view = plan.graph[static_cast<std::size_t>(v)];
    return DotOperand{*k.operand(i), &view.view, &view.shape, &plan::view_sharding(plan, v)};
  };
  local_dot(operand(0), operand(1), k.node().dot, *partial);
  k.result(std::move(partial));
}

}  // namespace tessel::detail
