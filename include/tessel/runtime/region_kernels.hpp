#pragma once
// The typed part of running a plan: when a plan is first built, each region the schedule made a
// kernel step for gets a kernel instantiated from the region's expression type (its evaluator is
// a struct of the region's ops, runtime/kernel_eval.hpp), stored in the step as a function
// pointer. A kernel reads everything else from the plan (shardings, axes, views) and the run's
// value slots, never from the expression object, so a cached plan runs any call of its type.
#include <mutex>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/core/fixed_vector.hpp"
#include "tessel/expr/concatenate.hpp"
#include "tessel/expr/dot.hpp"
#include "tessel/expr/iota.hpp"
#include "tessel/expr/node.hpp"
#include "tessel/expr/ops.hpp"
#include "tessel/expr/view.hpp"
#include "tessel/plan/plan.hpp"
#include "tessel/runtime/execute.hpp"
#include "tessel/runtime/region_binder.hpp"
#include "tessel/runtime/region_launch.hpp"
#include "tessel/runtime/row_cache.hpp"
#include "tessel/runtime/shared_buffers.hpp"

namespace tessel::detail {

// Whether E's region holds a reduction (row-fused ones are evaluated inside its kernel).
template <class E>
inline constexpr bool region_has_reduce = E::kind == NodeKind::reduce;
template <class Op, class C, class R, class... Ch>
inline constexpr bool region_has_reduce<ElementwiseNode<Op, C, R, Ch...>> = (region_has_reduce<Ch> || ...);

// A fused region rooted at the elementwise node E: one kernel per device over the result's shard.
template <class E>
void fused_kernel(plan::Plan const& plan, plan::Step const& step, RunState& state) {
  using V = expr_value_t<E>;
  static_assert(Element<V>, "tessel: a comparison result (bool) cannot be stored; use where() or astype<>()");
  int const base = step.node - node_count<E>::value + 1;
  auto const& p = plan.nodes[static_cast<std::size_t>(step.node)];
  Shape const& shape = plan.graph[static_cast<std::size_t>(step.node)].shape;
  Binder const b{plan, state};
  // Replicas that read the same memory the same way compute their block once (shared_buffers.hpp).
  auto const owner = shared_buffers(shape, *p.out, [&](std::size_t pos) {
    Shape const local = p.out->shard_shape(shape, static_cast<int>(pos));
    Space const space = make_space(local, nullptr);
    return b.bind<E>(base, static_cast<int>(pos), local, space);
  });
  auto out = TensorImpl::allocate(shape, dtype_of<V>, *p.out, owner);
  bool const rows = b.has_row_fusion<E>(base);
  bool const cached = backend::caches_rows && rows && b.row_cache_applies<E>(base);
  RowMemo const memo = rows ? b.row_memo<E>(base) : RowMemo{};
  Binder const shared{plan, state, &memo};
  bool memo_used = false;
  char const* label = step.label.c_str();
  for (std::size_t pos : local_positions(*out)) {
    Shape const local = out->shard_shape(pos);
    if (local.num_elements() == 0) continue;  // past an uneven dimension's end
    if (!owner.empty() && owner[pos] != pos) continue;  // its replica at owner[pos] computes the block
    Space space = make_space(local, nullptr);
    auto ev = shared.bind<E>(base, static_cast<int>(pos), local, space);
    LeafStrides<E> strides, reads;
    ev.for_each_leaf([&](LeafRef const& l) {
      strides.push_back(l.stride);
      if (l.reads_memory) reads.push_back(l.stride);
    });
    if (!rows) collapse(space, strides);
    auto* o = reinterpret_cast<V*>(out->shards[pos].bytes.data());
    Device const& exec = device(out->shards[pos].device);
    bool unit = unit_rows(space, reads);
    if constexpr (backend::caches_rows && !std::is_void_v<cached_reduce_t<E, V>>) {
      if (cached && ev.all_reduces_fused()) {
        auto cev = b.bind_cached<cached_reduce_t<E, V>, E>(base, static_cast<int>(pos), local, space, o);
        launch_elementwise<true>(exec, label, cev, o, space, rows, unit);
        continue;
      }
    }
    memo_used = true;
    if constexpr (region_has_reduce<E>) {
      if (rows && ev.all_reduces_fused()) {
        launch_elementwise<true>(exec, label, ev, o, space, rows, unit);
        continue;
      }
    }
    launch_elementwise<false>(exec, label, ev, o, space, rows, unit);
  }
  wait_for_buffer_writers(*out);
  if (cached) ++execution_counts().row_cached_kernels;
  if (memo_used)
    for (auto const& e : memo.entries) execution_counts().shared_row_reductions += e.read >= 0;
  state.values[static_cast<std::size_t>(step.node)] = out;
}

// A reduction computed apart (ReduceNode E): its input region reduced on each device, leaving
// the partial results the plan's collective (if any) completes.
template <class E>
void reduce_kernel(plan::Plan const& plan, plan::Step const& step, RunState& state) {
  using V = expr_value_t<E>;
  using Child = reduce_child_t<E>;
  int const base = step.node - node_count<E>::value + 1;
  int const child = base + node_count<Child>::value - 1;
  auto const& p = plan.nodes[static_cast<std::size_t>(step.node)];
  auto const& n = plan.graph[static_cast<std::size_t>(step.node)];
  Shape const& in_shape = plan.graph[static_cast<std::size_t>(child)].shape;
  NamedSharding const& in_sharding = *plan.nodes[static_cast<std::size_t>(child)].out;
  auto partial = TensorImpl::allocate(n.shape, dtype_of<V>, *p.partial);
  std::int64_t count = 1;
  for (auto a : n.axes) count *= in_shape[a];
  Binder const b{plan, state};
  for (std::size_t pos : local_positions(*partial)) {
    // A device whose input block is empty along a reduced axis (past an uneven end) holds the
    // reduction's identity, which the collective then combines like any partial result.
    Shape const in_local = in_sharding.shard_shape(in_shape, static_cast<int>(pos));
    if (partial->shard_shape(pos).num_elements() == 0) continue;
    Space space = make_space(in_local, &n.axes);
    auto ev = b.bind<Child>(base, static_cast<int>(pos), in_local, space);
    // A mean whose partial sums meet in a collective is scaled after it, as jnp.mean scales the
    // whole sum (scaling each partial would round differently and could miss an overflow).
    launch_reduce<typename E::tag::op, V>(device(partial->shards[pos].device), step.label.c_str(), ev,
                                     reinterpret_cast<V*>(partial->shards[pos].bytes.data()), space,
                                     static_cast<int>(n.axes.empty() ? 1 : n.axes.size()),
                                     p.collective ? 1 : count);
  }
  state.values[static_cast<std::size_t>(step.node)] = partial;
}

// The kernel each node could need, by graph node: an elementwise node that starts a region (its
// parent is not elementwise or a reduction, whose regions it joins) and every reduction.
template <class E, bool InRegion>
void region_kernels(std::vector<KernelFn>& table, int base) {
  int const id = base + node_count<E>::value - 1;
  if constexpr (E::kind == NodeKind::iota) {
    if constexpr (!InRegion) table[static_cast<std::size_t>(id)] = &fused_kernel<E>;
  } else if constexpr (E::kind == NodeKind::elementwise) {
    if constexpr (!InRegion) table[static_cast<std::size_t>(id)] = &fused_kernel<E>;
#define TESSEL_STEP(K) region_kernels<child_t<K, E>, true>(table, base + child_offset<E, K>)
    TESSEL_FOR_EACH_CHILD(E, TESSEL_STEP)
#undef TESSEL_STEP
  } else if constexpr (E::kind == NodeKind::reduce) {
    table[static_cast<std::size_t>(id)] = &reduce_kernel<E>;
    region_kernels<reduce_child_t<E>, true>(table, base);
  } else {  // a boundary: its operands start regions of their own
#define TESSEL_STEP(K) region_kernels<child_t<K, E>, false>(table, base + child_offset<E, K>)
    TESSEL_FOR_EACH_CHILD(E, TESSEL_STEP)
#undef TESSEL_STEP
  }
}

// The kernels of a plan for expressions of type E: each fused and reduce step's instantiated here.
template <class E>
StepKernels bind_kernels(plan::Plan const& plan) {
  std::vector<KernelFn> regions(plan.graph.size(), nullptr);
  region_kernels<E, false>(regions, 0);
  return bind_kernels(plan, regions);
}

// The kernels of a cached plan for expressions of type E, bound on its first run and kept for the
// program's life, as cached plans are (plan/cache.hpp): a plan only explained binds none.
StepKernels const* cached_kernels(plan::Plan const& plan);
StepKernels const& keep_kernels(plan::Plan const& plan, StepKernels kernels);
// Held while a plan's kernels are bound: a plan is bound once per process, so its processes'
// check that they run the same plan (a collective among them) runs once, whatever the threads.
std::unique_lock<std::mutex> lock_kernel_binding();
template <class E>
StepKernels const& kernels_for(plan::Plan const& plan) {
  // The plan a thread ran last, without a look-up: a jitted function is called over and over.
  thread_local plan::Plan const* last_plan = nullptr;
  thread_local StepKernels const* last_kernels = nullptr;
  if (last_plan == &plan) return *last_kernels;
  StepKernels const* k = cached_kernels(plan);
  if (k == nullptr) {
    auto binding = lock_kernel_binding();
    k = cached_kernels(plan);  // another thread may have bound it meanwhile
    if (k == nullptr) k = &keep_kernels(plan, bind_kernels<E>(plan));
  }
  last_plan = &plan;
  last_kernels = k;
  return *k;
}

// Binds the call's tensors and scalars to their graph nodes.
template <class E>
void bind_inputs(E const& e, int base, RunState& state) {
  auto const id = static_cast<std::size_t>(base + node_count<E>::value - 1);
  if constexpr (E::kind == NodeKind::tensor) {
    state.inputs[id] = state.values[id] = e.data.tensor.impl_ptr();
  } else if constexpr (E::kind == NodeKind::scalar) {
    state.scalars[id] = static_cast<double>(e.data.value);
  } else {
#define TESSEL_STEP(K) bind_inputs(std::get<K>(e.children), base + child_offset<E, K>, state)
    TESSEL_FOR_EACH_CHILD(E, TESSEL_STEP)
#undef TESSEL_STEP
  }
}

}  // namespace tessel::detail
