#pragma once
// The untyped kernels (not installed): one per node kind the op list (expr/op_list.hpp) says is
// computed by a `kernel`, `NAME_kernel` in src/runtime/kernels/NAME.cpp. It runs every step of its
// op that Step::by_op marks (its kernel steps, and its own collective or exchange if it has one,
// told apart by Step::kind). Each reads its operands from the run's value slots (Step::operands),
// its attributes from the plan's graph node and its shardings from the node's plan, and stores its
// result in the step's slot. A kind in the list without its kernel fails to link, naming the
// function.
#include "tessel/expr/op_list.hpp"
#include "tessel/plan/plan.hpp"
#include "tessel/runtime/execute.hpp"

namespace tessel::detail {

#define TESSEL_KERNEL_DECL_leaf(name)
#define TESSEL_KERNEL_DECL_region(name)
#define TESSEL_KERNEL_DECL_reshard(name)
#define TESSEL_KERNEL_DECL_kernel(name) void name##_kernel(plan::Plan const& plan, plan::Step const& step, RunState& state);
#define TESSEL_KERNEL_DECL(name, how) TESSEL_KERNEL_DECL_##how(name)
TESSEL_OPS(TESSEL_KERNEL_DECL)
#undef TESSEL_KERNEL_DECL

// The untyped kernel of a kind computed by `kernel`; nullptr for the others.
KernelFn kernel_for(NodeKind kind);

// An all-reduce (or reduce-scatter, landing on `to`) of `partial` over the groups of `axes`: a
// reduction's collective, which an op's own collective step may also run (src/runtime/execute.cpp).
ImplPtr complete_reduce(ImplPtr const& partial, plan::Collective kind, NamedSharding const& to,
                        FixedVector<std::uint8_t, max_mesh_axes> const& axes, ReduceOp op);

// What every kernel reads of its step.
struct KernelArgs {
  plan::Plan const& plan;
  plan::Step const& step;
  RunState& state;

  [[nodiscard]] plan::GraphNode const& node() const { return plan.graph[static_cast<std::size_t>(step.node)]; }
  [[nodiscard]] plan::NodePlan const& node_plan() const { return plan.nodes[static_cast<std::size_t>(step.node)]; }
  [[nodiscard]] ImplPtr const& operand(std::size_t k) const {
    return state.values[static_cast<std::size_t>(step.operands[k])];
  }
  [[nodiscard]] char const* label() const { return step.label.c_str(); }
  void result(ImplPtr value) const { state.values[static_cast<std::size_t>(step.node)] = std::move(value); }
};

}  // namespace tessel::detail
