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
#include "tessel/runtime/region_launch.hpp"
#include "tessel/runtime/row_cache.hpp"
#include "tessel/runtime/shared_buffers.hpp"

namespace tessel::detail {

// The stride arrays of a region's leaves, gathered per device without allocating (a region has
// fewer leaves than nodes).
template <class E>
using LeafStrides = FixedVector<std::int64_t*, static_cast<std::size_t>(node_count<E>::value)>;

template <class E>
struct eval_of {
  // Every boundary (constraint, dot, view made apart, concatenate) is read like a tensor.
  using type = LeafEval<expr_value_t<E>>;
};
template <class W>
struct eval_of<ScalarNode<W>> {
  using type = ScalarEval<W>;
};
template <class Op, class C, class R, class... Ch>
struct eval_of<ElementwiseNode<Op, C, R, Ch...>> {
  using type = NodeEval<kernel_op_t<Op, R>, C, typename eval_of<Ch>::type...>;
};
template <Element T>
struct eval_of<IotaNode<T>> {
  using type = IotaEval<T>;
};
template <class Op, class Ch>
struct eval_of<ReduceNode<Op, Ch>> {
  using type = ReduceEval<Op, expr_value_t<Ch>, typename eval_of<Ch>::type>;
};

// Which row-fused reductions of a region share a row_memo slot (kernel_eval.hpp): in begin_row
// order (a reduction's input before the reduction, children left to right), the first of each
// value (same evaluator type, same_value in the plan and the run) writes a slot and the later ones
// read it. A reader skips its input's begin_row, which is safe: the reductions inside it have
// equal ones inside the writer, which come earlier, so none of them writes a slot. Found once per
// kernel for the plain evaluator (the row-cached one binds its reductions differently).
struct RowMemo {
  struct Entry {
    int node = -1;
    void const* type = nullptr;
    std::int8_t write = -1, read = -1;
  };
  using Entries = FixedVector<Entry, 32>;  // (no allocation per kernel; reductions beyond it compute alone)
  Entries entries;

  [[nodiscard]] Entry const* find(int node) const {
    for (auto const& e : entries)
      if (e.node == node) return &e;
    return nullptr;
  }
};

// An address per type: the evaluator types of two reductions are equal when their keys are.
template <class E>
inline constexpr char type_key = 0;

// Builds a region's evaluator for one device from the plan and the run's values. Nodes are found
// by post-order number: a subtree of type E at post-order base `base` has its root at
// base + node_count<E> - 1 (node.hpp).
struct Binder {
  plan::Plan const& plan;
  RunState const& state;
  RowMemo const* memo = nullptr;  // the region's shared reductions, when bind() should use them

  template <class E>
  static constexpr int root(int base) {
    return base + node_count<E>::value - 1;
  }
  plan::NodePlan const& at(int id) const { return plan.nodes[static_cast<std::size_t>(id)]; }
  ImplPtr const& value(int id) const {
    return state.values[static_cast<std::size_t>(plan.slot[static_cast<std::size_t>(id)])];
  }

  template <class E>
  typename eval_of<E>::type bind(int base, int pos, Shape const& region, Space const& space) const {
    int id = root<E>(base);
    using V = expr_value_t<E>;
    if constexpr (E::kind == NodeKind::scalar) {
      using W = std::remove_cvref_t<decltype(std::declval<E const&>().data.value)>;
      return {static_cast<W>(state.scalars[static_cast<std::size_t>(id)])};
    } else if constexpr (E::kind == NodeKind::elementwise) {
      using Ev = typename eval_of<E>::type;
      if constexpr (arity<E> == 1) return Ev{bind<child_t<0, E>>(base, pos, region, space)};
      else if constexpr (arity<E> == 2)
        return Ev{bind<child_t<0, E>>(base, pos, region, space),
                  bind<child_t<1, E>>(base + child_offset<E, 1>, pos, region, space)};
      else
        return Ev{bind<child_t<0, E>>(base, pos, region, space),
                  bind<child_t<1, E>>(base + child_offset<E, 1>, pos, region, space),
                  bind<child_t<2, E>>(base + child_offset<E, 2>, pos, region, space)};
    } else if constexpr (E::kind == NodeKind::reduce) {
      typename eval_of<E>::type r{};
      if (at(id).row_fused) {
        r.fused = true;
        bind_row_reduction<E>(r, base, pos, region, space);
        r.child_fused = r.child.all_reduces_fused();
#ifdef TESSEL_ROW_MEMO
        if (auto const* m = memo ? memo->find(id) : nullptr) {
          r.memo_write = m->write;
          r.memo_read = m->read;
        }
#endif
      } else {
        r.leaf = leaf<V>(value(id), pos, region, space);
      }
      return r;
    } else if constexpr (E::kind == NodeKind::iota) {
      auto const& n = plan.graph[static_cast<std::size_t>(id)];
      NamedSharding const& s = *at(id).out;
      IotaEval<V> it;
      LeafLayout layout{s.shard_shape(n.shape, pos), {}, 0};
      layout.stride[n.axis] = 1;
      leaf_strides(layout, region, space, it.stride);
      it.start = s.layout().box(n.shape, pos)[n.axis].start;
      return it;
    } else if constexpr (E::kind == NodeKind::view) {
      // Read in place from the operand's shards, unless the region wanted it made apart.
      auto const& p = at(id);
      if (p.reshard) return leaf<V>(value(id), pos, region, space);
      auto const& n = plan.graph[static_cast<std::size_t>(id)];
      return view_leaf<V>(n.view, value(id - 1), pos, p.out->shard_shape(n.shape, pos), region, space);
    } else {
      return leaf<V>(value(id), pos, region, space);
    }
  }

  // What every row-fused reduction evaluator (ReduceEval, CachingReduceEval) needs: its input
  // bound, the row length, whether the input walks rows contiguously, and mean's scale.
  template <class E, class Eval>
  void bind_row_reduction(Eval& r, int base, int pos, Shape const& region, Space const& space) const {
    using V = expr_value_t<E>;
    r.child = bind<reduce_child_t<E>>(base, pos, region, space);
    r.length = space.extent[space.rank - 1];
    LeafStrides<reduce_child_t<E>> reads;
    r.child.for_each_leaf([&](LeafRef const& l) {
      if (l.reads_memory) reads.push_back(l.stride);
    });
    r.unit_rows = unit_rows(space, reads);
    if constexpr (E::tag::op::divides) r.scale = compute_t<V>(1) / static_cast<compute_t<V>>(r.length);
  }

  // The row-fused reductions of E's region in begin_row order.
  template <class E>
  void row_reductions(int base, RowMemo::Entries& out) const {
    if constexpr (E::kind == NodeKind::elementwise) {
      row_reductions<child_t<0, E>>(base, out);
      if constexpr (arity<E> > 1) row_reductions<child_t<1, E>>(base + child_offset<E, 1>, out);
      if constexpr (arity<E> > 2) row_reductions<child_t<2, E>>(base + child_offset<E, 2>, out);
    } else if constexpr (E::kind == NodeKind::reduce) {
      int const id = root<E>(base);
      if (!at(id).row_fused) return;  // read as a tensor: its input is not in this kernel
      row_reductions<reduce_child_t<E>>(base, out);
      if (out.size() < out.capacity()) out.push_back({id, &type_key<E>, -1, -1});
    }
  }

  template <class E>
  RowMemo row_memo(int base) const {
    RowMemo m;
#ifdef TESSEL_ROW_MEMO
    row_reductions<E>(base, m.entries);
    int slots = 0;
    for (std::size_t i = 0; i < m.entries.size(); ++i) {
      auto& e = m.entries[i];
      for (std::size_t j = 0; j < i; ++j) {
        auto& first = m.entries[j];
        if (first.read >= 0 || first.type != e.type || !same_value(plan, state, first.node, e.node)) continue;
        if (first.write < 0) {
          if (slots == row_memo_slots) break;
          first.write = static_cast<std::int8_t>(slots++);
        }
        e.read = first.write;
        break;
      }
    }
#endif
    return m;
  }

  template <class E>
  bool has_row_fusion(int base) const {
    if constexpr (E::kind == NodeKind::elementwise) {
      bool any = has_row_fusion<child_t<0, E>>(base);
      if constexpr (arity<E> > 1) any = any || has_row_fusion<child_t<1, E>>(base + child_offset<E, 1>);
      if constexpr (arity<E> > 2) any = any || has_row_fusion<child_t<2, E>>(base + child_offset<E, 2>);
      return any;
    } else if constexpr (E::kind == NodeKind::reduce) {
      return at(root<E>(base)).row_fused;
    } else {
      return false;
    }
  }

  // Row caching (row_cache.hpp) for the region rooted at E: every occurrence of the cached
  // reduction R and of its input S in the region must be the same value, and every R row-fused.
  template <class E>
  bool row_cache_applies(int base) const {
    using R = cached_reduce_t<E, expr_value_t<E>>;
    if constexpr (std::is_void_v<R>) {
      return false;
    } else {
      int first = -1;
      find_first<R, E>(base, first);
      return first >= 0 && region_matches<R, E>(base, root<reduce_child_t<R>>(first));
    }
  }

  template <class R, class E>
  static void find_first(int base, int& found_base) {
    if constexpr (std::same_as<E, R>) {
      if (found_base < 0) found_base = base;
    } else if constexpr (E::kind == NodeKind::elementwise) {
      find_first<R, child_t<0, E>>(base, found_base);
      if constexpr (arity<E> > 1) find_first<R, child_t<1, E>>(base + child_offset<E, 1>, found_base);
      if constexpr (arity<E> > 2) find_first<R, child_t<2, E>>(base + child_offset<E, 2>, found_base);
    }
  }

  // s: the graph node of the first R's input.
  template <class R, class E>
  bool region_matches(int base, int s) const {
    if constexpr (std::same_as<E, reduce_child_t<R>>) {
      return same_value(plan, state, root<E>(base), s);
    } else if constexpr (std::same_as<E, R>) {
      return at(root<E>(base)).row_fused && same_value(plan, state, root<reduce_child_t<R>>(base), s);
    } else if constexpr (E::kind == NodeKind::elementwise) {
      bool ok = region_matches<R, child_t<0, E>>(base, s);
      if constexpr (arity<E> > 1) ok = ok && region_matches<R, child_t<1, E>>(base + child_offset<E, 1>, s);
      if constexpr (arity<E> > 2) ok = ok && region_matches<R, child_t<2, E>>(base + child_offset<E, 2>, s);
      return ok;
    } else {
      return true;
    }
  }

  template <class E, class R>
  using cached_eval_t = typename cached_eval<E, R, eval_of>::type;

  // bind() with R's input cached in the output row `out` (see row_cache.hpp).
  template <class R, class E, class V>
  cached_eval_t<E, R> bind_cached(int base, int pos, Shape const& region, Space const& space, V* out) const {
    if constexpr (std::same_as<E, reduce_child_t<R>>) {
      LeafEval<V> l;
      l.data = out;
      leaf_strides(region, region, space, l.stride);
      return l;
    } else if constexpr (std::same_as<E, R>) {
      cached_eval_t<E, R> r{};
      bind_row_reduction<E>(r, base, pos, region, space);
      r.out.data = out;
      leaf_strides(region, region, space, r.out.stride);
      return r;
    } else if constexpr (E::kind == NodeKind::elementwise) {
      using Ev = cached_eval_t<E, R>;
      if constexpr (arity<E> == 1) return Ev{bind_cached<R, child_t<0, E>>(base, pos, region, space, out)};
      else if constexpr (arity<E> == 2)
        return Ev{bind_cached<R, child_t<0, E>>(base, pos, region, space, out),
                  bind_cached<R, child_t<1, E>>(base + child_offset<E, 1>, pos, region, space, out)};
      else
        return Ev{bind_cached<R, child_t<0, E>>(base, pos, region, space, out),
                  bind_cached<R, child_t<1, E>>(base + child_offset<E, 1>, pos, region, space, out),
                  bind_cached<R, child_t<2, E>>(base + child_offset<E, 2>, pos, region, space, out)};
    } else {
      return bind<E>(base, pos, region, space);
    }
  }
};

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
    region_kernels<child_t<0, E>, true>(table, base);
    if constexpr (arity<E> > 1) region_kernels<child_t<1, E>, true>(table, base + child_offset<E, 1>);
    if constexpr (arity<E> > 2) region_kernels<child_t<2, E>, true>(table, base + child_offset<E, 2>);
  } else if constexpr (E::kind == NodeKind::reduce) {
    table[static_cast<std::size_t>(id)] = &reduce_kernel<E>;
    region_kernels<reduce_child_t<E>, true>(table, base);
  } else if constexpr (arity<E> <= 3) {  // a boundary: its operands start regions of their own
    if constexpr (arity<E> > 0) region_kernels<child_t<0, E>, false>(table, base);
    if constexpr (arity<E> > 1) region_kernels<child_t<1, E>, false>(table, base + child_offset<E, 1>);
    if constexpr (arity<E> > 2) region_kernels<child_t<2, E>, false>(table, base + child_offset<E, 2>);
  } else {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (region_kernels<child_t<I, E>, false>(table, base + child_offset<E, I>), ...);
    }(std::make_index_sequence<arity<E>>{});
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
  } else if constexpr (arity<E> <= 3) {
    if constexpr (arity<E> > 0) bind_inputs(std::get<0>(e.children), base, state);
    if constexpr (arity<E> > 1) bind_inputs(std::get<1>(e.children), base + child_offset<E, 1>, state);
    if constexpr (arity<E> > 2) bind_inputs(std::get<2>(e.children), base + child_offset<E, 2>, state);
  } else {
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (bind_inputs(std::get<I>(e.children), base + child_offset<E, I>, state), ...);
    }(std::make_index_sequence<arity<E>>{});
  }
}

}  // namespace tessel::detail
