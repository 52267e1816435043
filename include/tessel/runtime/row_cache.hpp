#pragma once
// Common-subexpression sharing between a row-fused reduction and its consumer. softmax is
// exp(x - m) / sum(exp(x - m)): written plainly, the kernel computes exp twice per element (in the
// sum's pass over the row and again in the output pass). When a row-fused reduction's input S also
// occurs in the consumer's own region, the reduction's pass stores S's values in the output row
// (which the kernel is about to write anyway, so no scratch memory is needed) and the occurrences
// of S read them back: exp runs once per element and the result is bitwise the same.
//
// The candidate is found from the expression type (the same type S inside the reduction and in the
// region); the executor confirms at run time that the occurrences hold the same tensors, scalars
// and plans (same_value) and otherwise runs the plain kernel.
#include <type_traits>

#include "tessel/expr/node.hpp"
#include "tessel/plan/plan.hpp"
#include "tessel/runtime/kernel_eval.hpp"

namespace tessel::detail {

// Whether S occurs in E's own region: elementwise nodes are walked, reductions and other
// boundaries are not entered (their insides run in other passes). These type computations are
// class and variable templates that name their children's directly, one instantiation level per
// nesting level (no constexpr function recursion, which -fconstexpr-depth would also bound).
template <class E, class S>
inline constexpr bool in_region = std::same_as<E, S>;
template <class Op, class C, class R, class... Ch, class S>
inline constexpr bool in_region<ElementwiseNode<Op, C, R, Ch...>, S> =
    std::same_as<ElementwiseNode<Op, C, R, Ch...>, S> || (in_region<Ch, S> || ...);

template <class R>
using reduce_child_t = child_t<0, R>;

// Of the candidate reductions Ts (void: none), the one whose input has the most nodes (the first
// of equals): caching the costliest input saves the most. In softmax(x * c) both the max's input
// (x * c) and the sum's (exp(x * c - max)) occur in the output; only caching the sum's computes exp
// once per element.
template <class R>
inline constexpr int cached_input_nodes = node_count<reduce_child_t<R>>::value;
template <>
inline constexpr int cached_input_nodes<void> = -1;  // no candidate: any candidate is costlier
template <class A, class B>
using costlier_t = std::conditional_t<(cached_input_nodes<B> > cached_input_nodes<A>), B, A>;
template <class... Ts>
struct costliest {
  using type = void;
};
template <class T, class... Rest>
struct costliest<T, Rest...> {
  using type = costlier_t<T, typename costliest<Rest...>::type>;
};

// The reduction R in E's region (the costliest, above) whose input is computed (an elementwise
// node), also occurs in the region of Root and has the type V the kernel writes (so the output row
// can hold it); void when there is none.
template <class E, class Root, class V>
struct cached_reduce_in {
  using type = void;
};
template <class Op, class S, class Root, class V>
struct cached_reduce_in<ReduceNode<Op, S>, Root, V> {
  // Only computed inputs are worth keeping: a tensor is already in memory. Not for 16-bit floats:
  // the row would hold the input rounded, where the plain kernel reads its float value.
  static constexpr bool applies = [] {
    if constexpr (S::kind == NodeKind::elementwise && std::same_as<expr_value_t<S>, V> && !HalfFloat<V>)
      return in_region<Root, S>;
    else return false;
  }();
  using type = std::conditional_t<applies, ReduceNode<Op, S>, void>;
};
template <class Op, class C, class R, class... Ch, class Root, class V>
struct cached_reduce_in<ElementwiseNode<Op, C, R, Ch...>, Root, V> {
  using type = typename costliest<typename cached_reduce_in<Ch, Root, V>::type...>::type;
};

template <class E, class V>
using cached_reduce_t = typename cached_reduce_in<E, E, V>::type;

// A row-fused reduction that leaves its input's values in the output row.
template <class Op, class T, class Child>
struct CachingReduceEval {
  static constexpr bool row_invariant = true;  // under Fused (see RowValue in kernel_eval.hpp)
  Child child;
  LeafEval<T> out;  // the kernel's output, row-major over the space
  std::int64_t length = 0;
  T scale = T(1);  // mean: 1 / the row length
  bool unit_rows = false;
  T value{};

  template <class Row = SerialRow>
  KOKKOS_INLINE_FUNCTION void begin_row(std::int64_t const* idx, int outer, Row const& r = {}) {
    static_assert(std::same_as<Row, SerialRow>, "a row cache is one thread's (backend::caches_rows)");
    child.begin_row(idx, outer, r);
    out.begin_row(idx, outer);
    T* row = const_cast<T*>(out.data) + out.base;
    T id = Op::template identity<T>();
    value = scaled<Op>(unit_rows ? reduce_row_storing<Op, T, true>(child, length, id, row)
                                 : reduce_row_storing<Op, T, false>(child, length, id, row),
                       scale);
  }
  template <class Row = SerialRow>
  KOKKOS_INLINE_FUNCTION void step_row(std::int64_t const* idx, int outer, int, std::int64_t const*, Row const& r = {}) {
    begin_row(idx, outer, r);
  }
  template <bool Unit, bool Fused = false>
  KOKKOS_FORCEINLINE_FUNCTION T at(std::int64_t) const {
    return value;
  }
  KOKKOS_FORCEINLINE_FUNCTION void prefetch_next_row(std::int64_t e) const { child.prefetch_next_row(e); }
  KOKKOS_INLINE_FUNCTION void next_row_streams(NextRowStreams& s) const { child.next_row_streams(s); }
  template <class F>
  void for_each_leaf(F&& f) {
    child.for_each_leaf(f);
  }
  [[nodiscard]] bool all_reduces_fused() const { return child.all_reduces_fused(); }
};

// The evaluator of E's region with R's input cached: occurrences of R's input read the output
// row, R itself stores it.
enum class CachedRole { input, reduce, elementwise, other };
template <class E, class R>
inline constexpr CachedRole cached_role = std::same_as<E, reduce_child_t<R>> ? CachedRole::input
                                          : std::same_as<E, R>              ? CachedRole::reduce
                                          : E::kind == NodeKind::elementwise ? CachedRole::elementwise
                                                                             : CachedRole::other;

template <class E, class R, template <class> class EvalOf, CachedRole = cached_role<E, R>>
struct cached_eval {
  using type = typename EvalOf<E>::type;
};
template <class E, class R, template <class> class EvalOf>
struct cached_eval<E, R, EvalOf, CachedRole::input> {
  using type = LeafEval<expr_value_t<E>>;
};
template <class E, class R, template <class> class EvalOf>
struct cached_eval<E, R, EvalOf, CachedRole::reduce> {
  using S = reduce_child_t<R>;
  using type = CachingReduceEval<typename R::tag::op, expr_value_t<S>, typename EvalOf<S>::type>;
};
template <class Op, class C, class Res, class... Ch, class R, template <class> class EvalOf>
struct cached_eval<ElementwiseNode<Op, C, Res, Ch...>, R, EvalOf, CachedRole::elementwise> {
  using type = NodeEval<node_op_t<Op, Res, Ch...>, C, typename cached_eval<Ch, R, EvalOf>::type...>;
};

}  // namespace tessel::detail
