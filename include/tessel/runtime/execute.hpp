#pragma once
// Running a plan: the executor walks the plan's instruction list (plan::Plan::steps) in order,
// each step reading and writing value slots, inside a Kokkos Tools region named by the step's
// label. It never looks at the expression type: region kernels were made from it when the plan
// was built (runtime/region_kernels.hpp), and the tensors and scalars a call brings are bound to
// their graph nodes first.
#include <memory>
#include <vector>

#include "tessel/plan/plan.hpp"
#include "tessel/runtime/tensor_impl.hpp"

namespace tessel {

// What the executor ran, counted per logical step (a kernel on 8 devices counts once).
struct ExecutionCounts {
  long kernels = 0;
  long reshards = 0;  // sharding changes (each may run as several steps)
  // Collectives run, of each kind (reduction collectives and sharding changes' steps alike).
  plan::PerCollective<long> collectives;
  long row_cached_kernels = 0;  // kernels that computed a shared subexpression once per row
  long shared_row_reductions = 0;  // row-fused reductions that took an equal one's value per row

  long& operator[](plan::Collective c) { return collectives[c]; }
  long operator[](plan::Collective c) const { return collectives[c]; }
};
ExecutionCounts& execution_counts();

namespace detail {

using ImplPtr = std::shared_ptr<TensorImpl const>;

// One run's values, by graph node.
struct RunState {
  explicit RunState(std::size_t nodes) : inputs(nodes), values(nodes), scalars(nodes), paired(nodes) {}
  std::vector<ImplPtr> inputs;  // tensor leaves as the call gave them
  std::vector<ImplPtr> values;  // value slots (Plan::slot): what the steps have made so far
  std::vector<double> scalars;  // C++ scalar leaves
  // A value an op's kernel keeps for its next step (an argmax's values beside its indices).
  std::vector<ImplPtr> paired;
};

// What a step runs when the executor does not run it itself (Step::by_op, and every kernel step):
// a fused region's kernel, instantiated from the region's expression type
// (runtime/region_kernels.hpp), or an op's untyped kernel (NAME_kernel, src/runtime/kernels/).
using KernelFn = void (*)(plan::Plan const& plan, plan::Step const& step, RunState& state);
// One per step of a plan (nullptr for the steps the executor runs itself: reshards, a planner's
// collectives, views). The plan stays a value; its kernels are bound beside it (bind_kernels).
using StepKernels = std::vector<KernelFn>;

// Binds each step of `plan` to its kernel, given the region kernels by graph node; on a plan whose
// devices span processes, checks first that every process is about to run the same plan.
StepKernels bind_kernels(plan::Plan const& plan, std::vector<KernelFn> const& regions);

// Runs every step of the plan and returns the root's value.
ImplPtr execute(plan::Plan const& plan, StepKernels const& kernels, RunState& state);

// Do graph nodes a and b compute the same value the same way in this run: same plans, tensors,
// scalars and attributes, all the way down through their regions?
bool same_value(plan::Plan const& plan, RunState const& state, int a, int b);

// The same reshard as a plan step, outside a plan; counted in execution_counts().
ImplPtr reshard_counted(ImplPtr const& from, NamedSharding const& to);

}  // namespace detail
}  // namespace tessel
