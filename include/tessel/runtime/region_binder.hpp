#pragma once
// Binding a region's evaluator for one device: the Binder walks the region's expression type and
// fills its evaluator (runtime/kernel_eval.hpp) with the device's pointers, strides, row-fusion
// choices and row_memo slots, from the plan and the run's value slots alone (never from the
// expression object), so a kernel bound from a cached plan runs any call of its type.
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
  using type = NodeEval<node_op_t<Op, R, Ch...>, C, typename eval_of<Ch>::type...>;
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
        if (auto const* m = memo ? memo->find(id) : nullptr) {
          r.memo_write = m->write;
          r.memo_read = m->read;
        }
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
#define TESSEL_STEP(K) row_reductions<child_t<K, E>>(base + child_offset<E, K>, out)
      TESSEL_FOR_EACH_CHILD(E, TESSEL_STEP)
#undef TESSEL_STEP
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
    if constexpr (backend::row_memo_slots == 0) return m;
    row_reductions<E>(base, m.entries);
    int slots = 0;
    for (std::size_t i = 0; i < m.entries.size(); ++i) {
      auto& e = m.entries[i];
      for (std::size_t j = 0; j < i; ++j) {
        auto& first = m.entries[j];
        if (first.read >= 0 || first.type != e.type || !same_value(plan, state, first.node, e.node)) continue;
        if (first.write < 0) {
          if (slots == backend::row_memo_slots) break;
          first.write = static_cast<std::int8_t>(slots++);
        }
        e.read = first.write;
        break;
      }
    }
    return m;
  }

  template <class E>
  bool has_row_fusion(int base) const {
    if constexpr (E::kind == NodeKind::elementwise) {
      bool any = false;
#define TESSEL_STEP(K) (any = any || has_row_fusion<child_t<K, E>>(base + child_offset<E, K>))
      TESSEL_FOR_EACH_CHILD(E, TESSEL_STEP)
#undef TESSEL_STEP
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
#define TESSEL_STEP(K) find_first<R, child_t<K, E>>(base + child_offset<E, K>, found_base)
      TESSEL_FOR_EACH_CHILD(E, TESSEL_STEP)
#undef TESSEL_STEP
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
      bool ok = true;
#define TESSEL_STEP(K) (ok = ok && region_matches<R, child_t<K, E>>(base + child_offset<E, K>, s))
      TESSEL_FOR_EACH_CHILD(E, TESSEL_STEP)
#undef TESSEL_STEP
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

}  // namespace tessel::detail
