#pragma once
// Runs a plan. The walk over the expression type mirrors the planner's step writer
// (src/plan/propagate.cpp): boundaries (reductions not fused into rows, constraints) are made into
// tensors first, then each region is one kernel per device built from the region's type.
#include <algorithm>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "tessel/expr/node.hpp"
#include "tessel/expr/ops.hpp"
#include "tessel/plan/cache.hpp"
#include "tessel/runtime/collectives.hpp"
#include "tessel/runtime/device_put.hpp"
#include "tessel/runtime/kernel_eval.hpp"
#include "tessel/runtime/launch.hpp"
#include "tessel/runtime/local_dot.hpp"
#include "tessel/runtime/row_cache.hpp"
#include "tessel/runtime/run_plan.hpp"

namespace tessel {

// What the executor ran, counted per logical step (a kernel on 8 devices counts once).
struct ExecutionCounts {
  long kernels = 0, all_reduces = 0, reduce_scatters = 0, reshards = 0;
  // Reshards (each also counted in `reshards`) that ran as one collective.
  long all_gathers = 0, all_to_alls = 0, permutes = 0;
  long row_cached_kernels = 0;  // kernels that computed a shared subexpression once per row
};
ExecutionCounts& execution_counts();

namespace detail {

using ImplPtr = std::shared_ptr<TensorImpl const>;

// The iteration space of a kernel on one device, and how a tensor's shard maps onto it.
struct Space {
  int rank = 0;
  std::int64_t extent[max_rank]{};
  int perm[max_rank]{};  // space dimension k is dimension perm[k] of the region's shape
};
// Space of a region whose result has local shape `local` (reduction axes, when given, last).
Space make_space(Shape const& local, FixedVector<std::uint8_t, max_rank> const* reduced_axes);
// Strides of a shard of local shape `leaf` broadcast (aligned right) into a region of local shape
// `region`, in the space's dimension order.
void leaf_strides(Shape const& leaf, Shape const& region, Space const& space, std::int64_t* stride);
// Merges space dimensions that every leaf (and a row-major output) walks contiguously.
void collapse(Space& space, std::vector<std::int64_t*> const& leaf_strides);
ImplPtr reshard_counted(ImplPtr const& from, NamedSharding const& to);
// Completes a reduction from its per-device partial results (the collective the plan chose).
ImplPtr complete_reduce(ImplPtr const& partial, plan::NodePlan const& p, ReduceOp op);
// Divides every element of every shard by `divisor` (a mean after its all-reduce).
void divide_in_place(TensorImpl const& t, double divisor);

template <class Op>
constexpr ReduceOp reduce_op_of() {
  if constexpr (std::is_base_of_v<ops::sum_reduce, Op>) return ReduceOp::sum;
  else if constexpr (std::is_same_v<Op, ops::prod_reduce>) return ReduceOp::prod;
  else if constexpr (std::is_same_v<Op, ops::max_reduce>) return ReduceOp::max;
  else return ReduceOp::min;
}

template <class E>
struct eval_of;
template <class T>
struct eval_of<TensorNode<T>> {
  using type = LeafEval<T>;
};
template <class W>
struct eval_of<ScalarNode<W>> {
  using type = ScalarEval<W>;
};
template <class Op, class C, class R, class... Ch>
struct eval_of<ElementwiseNode<Op, C, R, Ch...>> {
  using type = NodeEval<Op, C, typename eval_of<Ch>::type...>;
};
template <class Op, class Ch>
struct eval_of<ReduceNode<Op, Ch>> {
  using type = ReduceEval<Op, expr_value_t<Ch>, typename eval_of<Ch>::type>;
};
template <class Ch>
struct eval_of<ConstraintNode<Ch>> {
  using type = LeafEval<expr_value_t<Ch>>;
};
template <class L, class R>
struct eval_of<DotNode<L, R>> {
  using type = LeafEval<expr_value_t<DotNode<L, R>>>;
};
template <class Ch>
struct eval_of<ViewNode<Ch>> {
  using type = LeafEval<expr_value_t<Ch>>;
};
template <class... Ch>
struct eval_of<ConcatNode<Ch...>> {
  using type = LeafEval<expr_value_t<ConcatNode<Ch...>>>;
};

// How a view's result reads its operand's shard: the view's local shape, strides (elements) and
// offset into the operand's row-major shard.
struct LeafLayout {
  Shape shape;
  std::int64_t stride[max_rank]{};
  std::int64_t offset = 0;
};
LeafLayout view_layout(ViewSpec const& view, Shape const& in_local, Shape const& out_local);
// leaf_strides for a leaf with any layout.
void leaf_strides(LeafLayout const& leaf, Shape const& region, Space const& space, std::int64_t* stride);
// A reshape that keeps every device's block: the same shard memory under another shape.
ImplPtr reinterpret_shards(ImplPtr const& in, Shape const& shape, NamedSharding const& sharding);
// Copies the operands' shards side by side along `axis` into out's (all share out's sharding).
void concat_shards(std::vector<ImplPtr> const& parts, std::size_t axis, TensorImpl& out);

// Whether E's region holds a reduction (row-fused ones are evaluated inside its kernel).
template <class E>
inline constexpr bool region_has_reduce = E::kind == NodeKind::reduce;
template <class Op, class C, class R, class... Ch>
inline constexpr bool region_has_reduce<ElementwiseNode<Op, C, R, Ch...>> = (region_has_reduce<Ch> || ...);

class Executor {
 public:
  explicit Executor(plan::Plan const& plan) : plan_(plan), values_(plan.nodes.size()) {}

  // The value of node e (post-order numbers base .. base + node_count - 1) as a tensor. A
  // boundary the planner found computed already (same_as) is not computed again.
  template <class E>
  ImplPtr materialize(E const& e, int base) {
    if constexpr (E::kind == NodeKind::reduce || E::kind == NodeKind::dot || E::kind == NodeKind::constraint ||
                  E::kind == NodeKind::concatenate) {
      auto id = static_cast<std::size_t>(base + node_count<E>::value - 1);
      int same = plan_.nodes[id].same_as;
      if (same >= 0 && values_[static_cast<std::size_t>(same)]) return values_[id] = values_[static_cast<std::size_t>(same)];
      return values_[id] = compute(e, base);
    } else {
      return compute(e, base);
    }
  }

 private:
  template <class E>
  ImplPtr compute(E const& e, int base) {
    int id = base + node_count<E>::value - 1;
    auto const& p = plan_.nodes[static_cast<std::size_t>(id)];
    if constexpr (E::kind == NodeKind::tensor) {
      prepare(e, base);
      return values_[static_cast<std::size_t>(id)];
    } else if constexpr (E::kind == NodeKind::constraint) {
      ImplPtr v = materialize(e.child, base);
      return p.reshard ? reshard_counted(v, *p.out) : v;
    } else if constexpr (E::kind == NodeKind::elementwise) {
      using V = expr_value_t<E>;
      static_assert(Element<V>, "tessel: a comparison result (bool) cannot be stored; use where() or astype<>()");
      prepare(e, base);
      auto out = TensorImpl::allocate(e.shape(), dtype_of<V>, *p.out);
      Shape local = p.out->shard_shape(e.shape());
      bool const rows = has_row_fusion(e, base);
      bool const cached = rows && row_cache_applies(e, base);
      for (std::size_t pos = 0; pos < out->shards.size(); ++pos) {
        Space space = make_space(local, nullptr);
        auto ev = bind(e, base, static_cast<int>(pos), local, space);
        std::vector<std::int64_t*> strides;
        ev.for_each_leaf([&](std::int64_t* s) { strides.push_back(s); });
        if (!rows) collapse(space, strides);
        auto* o = reinterpret_cast<V*>(out->shards[pos].bytes.data());
        auto const& exec = device(out->shards[pos].device).exec;
        bool unit = unit_rows(space, strides);
        if constexpr (!std::is_void_v<cached_reduce_t<E, V>>) {
          if (cached && ev.all_reduces_fused()) {
            auto cev = bind_cached<cached_reduce_t<E, V>>(e, base, static_cast<int>(pos), local, space, o);
            if (unit) launch_elementwise<true, true>(exec, cev, o, space, rows);
            else launch_elementwise<false, true>(exec, cev, o, space, rows);
            continue;
          }
        }
        if constexpr (region_has_reduce<E>) {
          if (rows && ev.all_reduces_fused()) {
            if (unit) launch_elementwise<true, true>(exec, ev, o, space, rows);
            else launch_elementwise<false, true>(exec, ev, o, space, rows);
            continue;
          }
        }
        if (unit) launch_elementwise<true, false>(exec, ev, o, space, rows);
        else launch_elementwise<false, false>(exec, ev, o, space, rows);
      }
      fence_all_devices();
      ++execution_counts().kernels;
      if (cached) ++execution_counts().row_cached_kernels;
      return out;
    } else if constexpr (E::kind == NodeKind::reduce) {
      using V = expr_value_t<E>;
      using Child = std::remove_cvref_t<decltype(e.child)>;
      prepare(e.child, base);
      int child_id = base + node_count<Child>::value - 1;
      auto const& in_sharding = input_sharding(e.child, child_id);
      Shape in_local = in_sharding.shard_shape(e.child.shape());
      auto partial = TensorImpl::allocate(e.shape(), dtype_of<V>, *p.partial);
      std::int64_t count = 1;
      for (auto a : e.axes) count *= e.child.shape()[a];
      for (std::size_t pos = 0; pos < partial->shards.size(); ++pos) {
        Space space = make_space(in_local, &e.axes);
        auto ev = bind(e.child, base, static_cast<int>(pos), in_local, space);
        // A mean whose partial sums meet in a collective divides after it, as jnp.mean divides the
        // whole sum (dividing each partial would round differently and could miss an overflow).
        launch_reduce<typename E::op, V>(device(partial->shards[pos].device).exec, ev,
                                         reinterpret_cast<V*>(partial->shards[pos].bytes.data()), space,
                                         static_cast<int>(e.axes.empty() ? 1 : e.axes.size()),
                                         p.collective == plan::Collective::none ? count : 1);
      }
      fence_all_devices();
      ++execution_counts().kernels;
      ImplPtr done = complete_reduce(partial, p, reduce_op_of<typename E::op>());
      if (std::is_same_v<typename E::op, ops::mean_reduce> && p.collective != plan::Collective::none)
        divide_in_place(*done, static_cast<double>(count));
      return p.reshard ? reshard_counted(done, *p.out) : done;
    } else if constexpr (E::kind == NodeKind::dot) {
      using V = expr_value_t<E>;
      static_assert(std::same_as<expr_value_t<decltype(e.lhs)>, expr_value_t<decltype(e.rhs)>>,
                    "tessel: dot_general operands must have one dtype; use astype<>() on one of them");
      ImplPtr l = materialize(e.lhs, base);
      ImplPtr r = materialize(e.rhs, base + node_count<std::remove_cvref_t<decltype(e.lhs)>>::value);
      auto partial = TensorImpl::allocate(e.shape(), dtype_of<V>, *p.partial);
      local_dot(*l, *r, e.dims, *partial);
      ++execution_counts().kernels;
      ImplPtr done = complete_reduce(partial, p, ReduceOp::sum);
      return p.reshard ? reshard_counted(done, *p.out) : done;
    } else if constexpr (E::kind == NodeKind::view) {
      using V = expr_value_t<E>;
      ImplPtr in = materialize(e.child, base);
      NamedSharding const& own = *p.after_collective;
      ImplPtr v;
      if (e.view.kind == ViewKind::reshape) {
        v = reinterpret_shards(in, e.shape(), own);
      } else {
        auto out = TensorImpl::allocate(e.shape(), dtype_of<V>, own);
        Shape local = own.shard_shape(e.shape());
        for (std::size_t pos = 0; pos < out->shards.size(); ++pos) {
          Space space = make_space(local, nullptr);
          LeafEval<V> l = view_leaf<V>(e.view, in, static_cast<int>(pos), local, local, space);
          collapse(space, {l.stride});
          auto* o = reinterpret_cast<V*>(out->shards[pos].bytes.data());
          auto const& exec = device(out->shards[pos].device).exec;
          if (unit_rows(space, {l.stride})) launch_elementwise<true, false>(exec, l, o, space, false);
          else launch_elementwise<false, false>(exec, l, o, space, false);
        }
        fence_all_devices();
        ++execution_counts().kernels;
        v = out;
      }
      return p.reshard ? reshard_counted(v, *p.out) : v;
    } else if constexpr (E::kind == NodeKind::concatenate) {
      using V = expr_value_t<E>;
      std::vector<ImplPtr> parts;
      [&]<std::size_t... I>(std::index_sequence<I...>) {
        (parts.push_back(materialize(std::get<I>(e.children), base + child_offset<E, I>)), ...);
      }(std::make_index_sequence<arity<E>>{});
      auto out = TensorImpl::allocate(e.shape(), dtype_of<V>, *p.after_collective);
      concat_shards(parts, e.axis, *out);
      ++execution_counts().kernels;
      return p.reshard ? reshard_counted(out, *p.out) : ImplPtr(out);
    } else {
      static_assert(E::kind != NodeKind::scalar, "tessel: a scalar alone is not a tensor expression");
    }
  }

  // The sharding a region's input node is read with (its plan's out).
  template <class E>
  NamedSharding const& input_sharding(E const&, int id) {
    return *plan_.nodes[static_cast<std::size_t>(id)].out;
  }

  // Makes the tensors a region reads: operands (resharded as planned) and boundaries.
  template <class E>
  void prepare(E const& e, int base) {
    int id = base + node_count<E>::value - 1;
    auto const& p = plan_.nodes[static_cast<std::size_t>(id)];
    if constexpr (E::kind == NodeKind::tensor) {
      ImplPtr v = e.tensor.impl_ptr();
      if (p.same_as >= 0 && values_[static_cast<std::size_t>(p.same_as)])
        values_[static_cast<std::size_t>(id)] = values_[static_cast<std::size_t>(p.same_as)];
      else values_[static_cast<std::size_t>(id)] = p.reshard ? reshard_counted(v, *p.out) : v;
    } else if constexpr (E::kind == NodeKind::elementwise) {
      prepare(std::get<0>(e.children), base + child_offset<E, 0>);
      if constexpr (arity<E> > 1) prepare(std::get<1>(e.children), base + child_offset<E, 1>);
      if constexpr (arity<E> > 2) prepare(std::get<2>(e.children), base + child_offset<E, 2>);
    } else if constexpr (E::kind == NodeKind::reduce) {
      if (p.row_fused) prepare(e.child, base);
      else values_[static_cast<std::size_t>(id)] = materialize(e, base);
    } else if constexpr (E::kind == NodeKind::constraint || E::kind == NodeKind::dot ||
                         E::kind == NodeKind::concatenate) {
      values_[static_cast<std::size_t>(id)] = materialize(e, base);
    } else if constexpr (E::kind == NodeKind::view) {
      // Read in place by the region (bind), unless the region wants it sharded otherwise.
      if (p.reshard) values_[static_cast<std::size_t>(id)] = materialize(e, base);
      else values_[static_cast<std::size_t>(id - 1)] = materialize(e.child, base);
    }
  }

  // A view of `in` (the operand's value) as a leaf of a region of local shape `region`; `local`
  // is the view's own local shape.
  template <class T>
  LeafEval<T> view_leaf(ViewSpec const& view, ImplPtr const& in, int pos, Shape const& local, Shape const& region,
                        Space const& space) {
    LeafLayout layout = view_layout(view, in->sharding.shard_shape(in->shape), local);
    LeafEval<T> l;
    l.data = reinterpret_cast<T const*>(in->shards[static_cast<std::size_t>(pos)].bytes.data()) + layout.offset;
    leaf_strides(layout, region, space, l.stride);
    return l;
  }

  template <class E>
  bool has_row_fusion(E const& e, int base) const {
    int id = base + node_count<E>::value - 1;
    if constexpr (E::kind == NodeKind::elementwise) {
      bool any = has_row_fusion(std::get<0>(e.children), base + child_offset<E, 0>);
      if constexpr (arity<E> > 1) any = any || has_row_fusion(std::get<1>(e.children), base + child_offset<E, 1>);
      if constexpr (arity<E> > 2) any = any || has_row_fusion(std::get<2>(e.children), base + child_offset<E, 2>);
      return any;
    } else if constexpr (E::kind == NodeKind::reduce) {
      return plan_.nodes[static_cast<std::size_t>(id)].row_fused;
    } else {
      return false;
    }
  }

  template <class T>
  LeafEval<T> leaf(ImplPtr const& v, int pos, Shape const& region, Space const& space) {
    LeafEval<T> l;
    l.data = reinterpret_cast<T const*>(v->shards[static_cast<std::size_t>(pos)].bytes.data());
    leaf_strides(v->sharding.shard_shape(v->shape), region, space, l.stride);
    return l;
  }

  template <class E>
  typename eval_of<E>::type bind(E const& e, int base, int pos, Shape const& region, Space const& space) {
    int id = base + node_count<E>::value - 1;
    auto const& p = plan_.nodes[static_cast<std::size_t>(id)];
    using V = expr_value_t<E>;
    if constexpr (E::kind == NodeKind::tensor || E::kind == NodeKind::constraint || E::kind == NodeKind::dot ||
                  E::kind == NodeKind::concatenate) {
      return leaf<V>(values_[static_cast<std::size_t>(id)], pos, region, space);
    } else if constexpr (E::kind == NodeKind::view) {
      if (p.reshard) return leaf<V>(values_[static_cast<std::size_t>(id)], pos, region, space);
      return view_leaf<V>(e.view, values_[static_cast<std::size_t>(id - 1)], pos, p.out->shard_shape(e.shape()), region,
                          space);
    } else if constexpr (E::kind == NodeKind::scalar) {
      return {e.value};
    } else if constexpr (E::kind == NodeKind::elementwise) {
      using Ev = typename eval_of<E>::type;
      auto const& c = e.children;
      if constexpr (arity<E> == 1) return Ev{bind(std::get<0>(c), base, pos, region, space)};
      else if constexpr (arity<E> == 2)
        return Ev{bind(std::get<0>(c), base, pos, region, space),
                  bind(std::get<1>(c), base + child_offset<E, 1>, pos, region, space)};
      else
        return Ev{bind(std::get<0>(c), base, pos, region, space),
                  bind(std::get<1>(c), base + child_offset<E, 1>, pos, region, space),
                  bind(std::get<2>(c), base + child_offset<E, 2>, pos, region, space)};
    } else {
      typename eval_of<E>::type r{};
      if (p.row_fused) {
        r.fused = true;
        bind_row_reduction(r, e, base, pos, region, space);
        r.child_fused = r.child.all_reduces_fused();
      } else {
        r.leaf = leaf<V>(values_[static_cast<std::size_t>(id)], pos, region, space);
      }
      return r;
    }
  }

  // Row caching (row_cache.hpp) for the region e: every occurrence of the cached reduction R and
  // of its input S in the region must be the same value (same tensors, scalars and plans), and
  // every R row-fused.
  template <class E>
  bool row_cache_applies(E const& e, int base) const {
    using R = cached_reduce_t<E, expr_value_t<E>>;
    if constexpr (std::is_void_v<R>) {
      return false;
    } else {
      R const* first = nullptr;
      int first_base = 0;
      find_first(e, base, first, first_base);
      return first && region_matches<R>(e, base, first->child, first_base);
    }
  }

  template <class R, class E>
  static void find_first(E const& e, int base, R const*& found, int& found_base) {
    if constexpr (std::same_as<E, R>) {
      if (!found) {
        found = &e;
        found_base = base;
      }
    } else if constexpr (E::kind == NodeKind::elementwise) {
      find_first(std::get<0>(e.children), base + child_offset<E, 0>, found, found_base);
      if constexpr (arity<E> > 1) find_first(std::get<1>(e.children), base + child_offset<E, 1>, found, found_base);
      if constexpr (arity<E> > 2) find_first(std::get<2>(e.children), base + child_offset<E, 2>, found, found_base);
    }
  }

  template <class R, class E>
  bool region_matches(E const& e, int base, reduce_child_t<R> const& s, int s_base) const {
    if constexpr (std::same_as<E, reduce_child_t<R>>) {
      return same_value(e, base, s, s_base);
    } else if constexpr (std::same_as<E, R>) {
      return plan_at<E>(base).row_fused && same_value(e.child, base, s, s_base);
    } else if constexpr (E::kind == NodeKind::elementwise) {
      bool ok = region_matches<R>(std::get<0>(e.children), base + child_offset<E, 0>, s, s_base);
      if constexpr (arity<E> > 1) ok = ok && region_matches<R>(std::get<1>(e.children), base + child_offset<E, 1>, s, s_base);
      if constexpr (arity<E> > 2) ok = ok && region_matches<R>(std::get<2>(e.children), base + child_offset<E, 2>, s, s_base);
      return ok;
    } else {
      return true;
    }
  }

  template <class E>
  plan::NodePlan const& plan_at(int base) const {
    return plan_.nodes[static_cast<std::size_t>(base + node_count<E>::value - 1)];
  }

  // Do two subtrees of one type (at post-order bases a_base and b_base) compute the same value the
  // same way: same tensors, scalars, axes and plans?
  template <class E>
  bool same_value(E const& a, int a_base, E const& b, int b_base) const {
    if (!plan::computes_alike(plan_at<E>(a_base), plan_at<E>(b_base))) return false;
    if constexpr (E::kind == NodeKind::tensor) {
      return a.tensor.impl_ptr() == b.tensor.impl_ptr();
    } else if constexpr (E::kind == NodeKind::scalar) {
      return a.value == b.value;
    } else if constexpr (E::kind == NodeKind::elementwise) {
      bool ok = same_value(std::get<0>(a.children), a_base + child_offset<E, 0>, std::get<0>(b.children), b_base + child_offset<E, 0>);
      if constexpr (arity<E> > 1)
        ok = ok && same_value(std::get<1>(a.children), a_base + child_offset<E, 1>, std::get<1>(b.children), b_base + child_offset<E, 1>);
      if constexpr (arity<E> > 2)
        ok = ok && same_value(std::get<2>(a.children), a_base + child_offset<E, 2>, std::get<2>(b.children), b_base + child_offset<E, 2>);
      return ok;
    } else if constexpr (E::kind == NodeKind::reduce) {
      return a.axes == b.axes && a.keepdims == b.keepdims && same_value(a.child, a_base, b.child, b_base);
    } else if constexpr (E::kind == NodeKind::constraint) {
      return a.sharding == b.sharding && same_value(a.child, a_base, b.child, b_base);
    } else {
      return false;  // other boundaries: not worth comparing
    }
  }

  template <class E, class R>
  using cached_eval_t = typename cached_eval<E, R, eval_of>::type;

  // bind() with R's input cached in the output row `out` (see row_cache.hpp).
  template <class R, class E, class V>
  cached_eval_t<E, R> bind_cached(E const& e, int base, int pos, Shape const& region, Space const& space, V* out) {
    if constexpr (std::same_as<E, reduce_child_t<R>>) {
      LeafEval<V> l;
      l.data = out;
      leaf_strides(region, region, space, l.stride);
      return l;
    } else if constexpr (std::same_as<E, R>) {
      cached_eval_t<E, R> r{};
      bind_row_reduction(r, e, base, pos, region, space);
      r.out.data = out;
      leaf_strides(region, region, space, r.out.stride);
      return r;
    } else if constexpr (E::kind == NodeKind::elementwise) {
      using Ev = cached_eval_t<E, R>;
      auto const& c = e.children;
      if constexpr (arity<E> == 1) return Ev{bind_cached<R>(std::get<0>(c), base, pos, region, space, out)};
      else if constexpr (arity<E> == 2)
        return Ev{bind_cached<R>(std::get<0>(c), base, pos, region, space, out),
                  bind_cached<R>(std::get<1>(c), base + child_offset<E, 1>, pos, region, space, out)};
      else
        return Ev{bind_cached<R>(std::get<0>(c), base, pos, region, space, out),
                  bind_cached<R>(std::get<1>(c), base + child_offset<E, 1>, pos, region, space, out),
                  bind_cached<R>(std::get<2>(c), base + child_offset<E, 2>, pos, region, space, out)};
    } else {
      return bind(e, base, pos, region, space);
    }
  }

  // What every row-fused reduction evaluator (ReduceEval, CachingReduceEval) needs: its input
  // bound, the row length, whether the input walks rows contiguously, and mean's divisor.
  template <class Eval, class E>
  void bind_row_reduction(Eval& r, E const& e, int base, int pos, Shape const& region, Space const& space) {
    using V = expr_value_t<E>;
    r.child = bind(e.child, base, pos, region, space);
    r.length = space.extent[space.rank - 1];
    std::vector<std::int64_t*> strides;
    r.child.for_each_leaf([&](std::int64_t* s) { strides.push_back(s); });
    r.unit_rows = unit_rows(space, strides);
    if constexpr (std::is_same_v<typename E::op, ops::mean_reduce>) r.divisor = static_cast<V>(r.length);
  }

  // Do all leaves walk the last space dimension contiguously?
  static bool unit_rows(Space const& space, std::vector<std::int64_t*> const& strides) {
    return std::all_of(strides.begin(), strides.end(), [&](std::int64_t* s) { return s[space.rank - 1] == 1; });
  }


  template <bool Unit, bool Fused, class Ev, class V>
  static void launch_elementwise(ExecSpace const& exec, Ev const& ev, V* out, Space const& space, bool rows) {
    int outer = space.rank - 1;
    std::int64_t length = space.extent[outer];
    std::int64_t nrows = 1;
    for (int d = 0; d < outer; ++d) nrows *= space.extent[d];
    // Rows with fused reductions must stay whole; otherwise long rows are cut into chunks.
    std::int64_t chunk = rows || length < run_chunk ? (length > 0 ? length : 1) : run_chunk;
    std::int64_t chunks = (length + chunk - 1) / chunk;
    Space s = space;
    for_each_index(
        exec, "tessel::fused", nrows * chunks, nrows * length, KOKKOS_LAMBDA(std::int64_t item) {
          std::int64_t row = item / chunks;
          std::int64_t idx[max_rank];
          for (int d = outer; d-- > 0;) {
            idx[d] = row % s.extent[d];
            row /= s.extent[d];
          }
          Ev local = ev;
          local.begin_row(idx, outer);
          std::int64_t begin = (item % chunks) * chunk;
          std::int64_t end = begin + chunk < length ? begin + chunk : length;
          V* o = out + (item / chunks) * length;
          // A fresh copy after begin_row: its row-invariant values (fused reductions, bases) are
          // then plainly loop-invariant, and the output never aliases an input (tessel always
          // writes a new tensor), which ivdep tells the vectorizer.
          Ev const row_eval = local;
#pragma GCC ivdep
          for (std::int64_t e = begin; e < end; ++e) o[e] = static_cast<V>(row_eval.template at<Unit, Fused>(e));
        });
  }

  // Reduces the last `nreduced` space dimensions; one output per combination of the others.
  template <class Op, class V, class Ev>
  static void launch_reduce(ExecSpace const& exec, Ev const& ev, V* out, Space const& space, int nreduced,
                            std::int64_t global_count) {
    int outer = space.rank - 1;
    int kept = space.rank - nreduced;
    std::int64_t outputs = 1, per_output = 1;
    for (int d = 0; d < kept; ++d) outputs *= space.extent[d];
    for (int d = kept; d < outer; ++d) per_output *= space.extent[d];
    std::int64_t length = space.extent[outer];
    V divisor = std::is_same_v<Op, ops::mean_reduce> ? static_cast<V>(global_count) : V(1);
    Space s = space;
    auto row_sum = KOKKOS_LAMBDA(std::int64_t o, std::int64_t r, V acc)->V {
      std::int64_t idx[max_rank];
      for (int d = outer; d-- > kept;) {
        idx[d] = r % s.extent[d];
        r /= s.extent[d];
      }
      for (int d = kept; d-- > 0;) {
        idx[d] = o % s.extent[d];
        o /= s.extent[d];
      }
      Ev local = ev;
      local.begin_row(idx, outer);
      return reduce_row<Op, V, false, false>(local, length, acc);
    };
    if (outputs >= 64) {
      for_each_index(
          exec, "tessel::reduce", outputs, outputs * per_output * length, KOKKOS_LAMBDA(std::int64_t o) {
            V acc = Op::template identity<V>();
            for (std::int64_t r = 0; r < per_output; ++r) acc = row_sum(o, r, acc);
            out[o] = acc / divisor;
          });
    } else {
      // Few outputs: spread each output's rows over the threads instead.
      for (std::int64_t o = 0; o < outputs; ++o) {
        V result{};
        Kokkos::parallel_reduce(
            "tessel::reduce", Kokkos::RangePolicy<ExecSpace>(exec, 0, per_output),
            KOKKOS_LAMBDA(std::int64_t r, V & acc) { acc = row_sum(o, r, acc); }, reducer<Op>(result));
        // A view-to-view copy: deep_copy of a scalar value writes zeros with memset, which turns
        // a -0.0 result (max of -0.0s) into +0.0.
        V value = result / divisor;
        Kokkos::View<V, MemSpace, Kokkos::MemoryUnmanaged> slot(out + o);
        Kokkos::deep_copy(exec, slot, Kokkos::View<V, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(&value));
        exec.fence();
      }
    }
  }

  // A Kokkos reducer that combines with the op's own combine (Kokkos::Max drops NaN, and
  // Kokkos::Sum of integers may overflow; the op's combine has XLA's semantics for both).
  template <class Op, class V>
  struct OpReducer {
    using reducer = OpReducer;
    using value_type = V;
    using result_view_type = Kokkos::View<V, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;
    result_view_type value;
    KOKKOS_INLINE_FUNCTION explicit OpReducer(V& v) : value(&v) {}
    KOKKOS_INLINE_FUNCTION void join(V& dest, V const& src) const { dest = Op::combine(dest, src); }
    KOKKOS_INLINE_FUNCTION void init(V& v) const { v = Op::template identity<V>(); }
    KOKKOS_INLINE_FUNCTION V& reference() const { return *value.data(); }
    KOKKOS_INLINE_FUNCTION result_view_type view() const { return value; }
    KOKKOS_INLINE_FUNCTION bool references_scalar() const { return true; }
  };
  template <class Op, class V>
  static auto reducer(V& result) {
    return OpReducer<Op, V>(result);
  }

  plan::Plan const& plan_;
  std::vector<ImplPtr> values_;
};

}  // namespace detail

// Evaluates an expression now, with the planned sharding or the one requested.
template <Expression E>
Tensor<expr_value_t<E>> eval(E const& e, std::optional<NamedSharding> const& out = std::nullopt) {
  static_assert(Element<expr_value_t<E>>, "tessel: only float32, float64 and int32 expressions can be evaluated");
  if constexpr (!detail::depth_ok<E>) {
    return Tensor<expr_value_t<E>>(nullptr);  // not reached: too deep an expression does not compile (node.hpp)
  } else {
    auto const& plan = plan::plan_for(e, out);
    detail::Executor ex(plan);
    return Tensor<expr_value_t<E>>(ex.materialize(e, 0));
  }
}

template <Element T>
template <Expression E>
  requires std::same_as<expr_value_t<E>, T>
Tensor<T>::Tensor(E const& e) : Tensor(eval(e)) {}

// The plan of an expression as text: kernels with the ops they fuse, collectives with mesh axes,
// bytes and estimated cost, reshards with the operand that needs them.
template <Expression E>
std::string explain(E const& e, std::optional<NamedSharding> const& out = std::nullopt) {
  return plan::to_string(plan::plan_for(e, out));
}
template <Expression E>
plan::Plan const& plan_of(E const& e, std::optional<NamedSharding> const& out = std::nullopt) {
  return plan::plan_for(e, out);
}

}  // namespace tessel
