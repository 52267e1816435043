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

// How often S occurs in E's own region: elementwise nodes are walked, reductions and other
// boundaries are not entered (their insides run in other passes).
template <class E, class S>
constexpr int region_count() {
  if constexpr (std::same_as<E, S>) return 1;
  else if constexpr (E::kind == NodeKind::elementwise)
    return []<class... C>(std::tuple<C...>*) { return (0 + ... + region_count<C, S>()); }(
        static_cast<decltype(E::children)*>(nullptr));
  else return 0;
}

template <class R>
using reduce_child_t = std::remove_cvref_t<decltype(std::declval<R>().child)>;

// The first reduction R in E's region whose input is computed (an elementwise node), also occurs
// in the region and has the type V the kernel writes (so the output row can hold it); void when
// there is none.
template <class E, class Root, class V>
constexpr auto find_cached_reduce();

template <class Root, class V, class E, class... Rest>
constexpr auto find_first_cached() {
  using Found = typename decltype(find_cached_reduce<E, Root, V>())::type;
  if constexpr (!std::is_void_v<Found> || sizeof...(Rest) == 0) return std::type_identity<Found>{};
  else return find_first_cached<Root, V, Rest...>();
}

template <class E, class Root, class V>
constexpr auto find_cached_reduce() {
  if constexpr (E::kind == NodeKind::reduce) {
    using S = reduce_child_t<E>;
    // Only computed inputs are worth keeping: a tensor is already in memory.
    if constexpr (S::kind == NodeKind::elementwise && std::same_as<expr_value_t<S>, V> && region_count<Root, S>() > 0)
      return std::type_identity<E>{};
    else return std::type_identity<void>{};
  } else if constexpr (E::kind == NodeKind::elementwise) {
    return []<class... C>(std::tuple<C...>*) { return find_first_cached<Root, V, C...>(); }(
        static_cast<decltype(E::children)*>(nullptr));
  } else {
    return std::type_identity<void>{};
  }
}

template <class E, class V>
using cached_reduce_t = typename decltype(find_cached_reduce<E, E, V>())::type;

// A row-fused reduction that leaves its input's values in the output row.
template <class Op, class T, class Child>
struct CachingReduceEval {
  Child child;
  LeafEval<T> out;  // the kernel's output, row-major over the space
  std::int64_t length = 0;
  T divisor = T(1);  // mean: the row length
  bool unit_rows = false;
  T value{};

  KOKKOS_INLINE_FUNCTION void begin_row(std::int64_t const* idx, int outer) {
    child.begin_row(idx, outer);
    out.begin_row(idx, outer);
    T* row = const_cast<T*>(out.data) + out.base;
    T id = Op::template identity<T>();
    value = (unit_rows ? reduce_row_storing<Op, T, true>(child, length, id, row)
                       : reduce_row_storing<Op, T, false>(child, length, id, row)) /
            divisor;
  }
  template <bool Unit, bool Fused = false>
  KOKKOS_FORCEINLINE_FUNCTION T at(std::int64_t) const {
    return value;
  }
  KOKKOS_FORCEINLINE_FUNCTION void prefetch_next_row(std::int64_t e) const { child.prefetch_next_row(e); }
  template <class F>
  void for_each_leaf(F&& f) {
    child.for_each_leaf(f);
  }
  [[nodiscard]] bool all_reduces_fused() const { return child.all_reduces_fused(); }
};

// The evaluator of E's region with R's input cached: occurrences of R's input read the output
// row, R itself stores it.
template <class E, class R, template <class> class EvalOf>
constexpr auto cached_eval_type() {
  using S = reduce_child_t<R>;
  if constexpr (std::same_as<E, S>) return std::type_identity<LeafEval<expr_value_t<S>>>{};
  else if constexpr (std::same_as<E, R>)
    return std::type_identity<CachingReduceEval<typename R::op, expr_value_t<S>, typename EvalOf<S>::type>>{};
  else if constexpr (E::kind == NodeKind::elementwise)
    return []<class Op, class C, class Res, class... Ch>(ElementwiseNode<Op, C, Res, Ch...>*) {
      return std::type_identity<NodeEval<Op, C, typename decltype(cached_eval_type<Ch, R, EvalOf>())::type...>>{};
    }(static_cast<E*>(nullptr));
  else return std::type_identity<typename EvalOf<E>::type>{};
}

}  // namespace tessel::detail
