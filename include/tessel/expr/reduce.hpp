#pragma once
// Reductions over one, several or all axes (jnp.sum, mean, max, min, prod with keepdims), and
// softmax, log_softmax and logsumexp written with them, as jax.nn writes them.
#include <initializer_list>
#include <optional>

#include "tessel/expr/elementwise.hpp"
#include "tessel/expr/node.hpp"

namespace tessel {

struct ReductionAxesCapacity {
  static constexpr char const* what = "reduction axes";
};

// The axes to reduce: all of them (the default), one, or several; negative counts from the end.
class Axes {
 public:
  Axes() = default;  // all axes
  Axes(int axis) : axes_{axis}, all_(false) {}  // NOLINT: implicit by design
  Axes(std::initializer_list<int> axes) : all_(false) {
    for (int a : axes) axes_.push_back(a);
  }
  [[nodiscard]] bool all() const { return all_; }
  [[nodiscard]] FixedVector<int, max_rank, ReductionAxesCapacity> const& list() const { return axes_; }

 private:
  FixedVector<int, max_rank, ReductionAxesCapacity> axes_;
  bool all_ = true;
};

namespace detail {
// Normalizes axes against a shape (sorted, non-negative); fails naming the axis and the shape.
FixedVector<std::uint8_t, max_rank> normalize_axes(char const* op, Axes const& axes, Shape const& shape);
Shape reduced_shape(Shape const& shape, FixedVector<std::uint8_t, max_rank> const& axes, bool keepdims);

template <class Op, class X>
auto make_reduce(X const& x, Axes const& axes, bool keepdims) {
  auto n = as_node(x);
  static_assert(!std::same_as<expr_value_t<decltype(n)>, bool>, "tessel: reduce a comparison after astype<int32_t>()");
  auto normalized = normalize_axes(Op::name, axes, n.shape());
  return ReduceNode<Op, decltype(n)>{{n}, {normalized, keepdims, reduced_shape(n.shape(), normalized, keepdims)}};
}
}  // namespace detail

#define TESSEL_REDUCTION(fn, Op)                                                    \
  template <class X>                                                                \
    requires(Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>)          \
  auto fn(X const& x, Axes const& axes = {}, bool keepdims = false) {               \
    return detail::make_reduce<ops::Op>(x, axes, keepdims);                         \
  }

TESSEL_REDUCTION(sum, sum_reduce)
// jnp.mean of integers sums and divides in float32.
template <class X>
  requires(Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>)
auto mean(X const& x, Axes const& axes = {}, bool keepdims = false) {
  if constexpr (std::integral<expr_value_t<node_t<X>>>) return detail::make_reduce<ops::mean_reduce>(astype<float>(x), axes, keepdims);
  else return detail::make_reduce<ops::mean_reduce>(x, axes, keepdims);
}
TESSEL_REDUCTION(max, max_reduce)
TESSEL_REDUCTION(min, min_reduce)
TESSEL_REDUCTION(prod, prod_reduce)
#undef TESSEL_REDUCTION

// jax.nn.softmax(x, axis): exp(x - max) / sum(exp(x - max)). The exp appears twice, as in JAX, and the
// kernel computes it once per element (runtime/row_cache.hpp).
template <class X>
auto softmax(X const& x, int axis = -1) {
  auto e = detail::exp_of_shifted(x - max(x, axis, true));
  return e / sum(e, axis, true);
}

// jax.nn.log_softmax(x, axis): shifted - log(sum(exp(shifted)))
template <class X>
auto log_softmax(X const& x, int axis = -1) {
  auto shifted = x - max(x, axis, true);
  return shifted - log(sum(detail::exp_of_shifted(shifted), axis, true));
}

// jax.nn.logsumexp(x, axis, keepdims): max + log(sum(exp(x - max)))
// JAX shifts by the max only where it is finite (an all -inf row gives -inf, a row holding +inf
// gives +inf, not NaN), so the shifted argument may be positive: plain exp.
template <class X>
auto logsumexp(X const& x, int axis = -1, bool keepdims = false) {
  auto finite_max = [&](bool keep) {
    auto m = max(x, axis, keep);
    return where(abs(m) < Kokkos::Experimental::infinity_v<float>, m, 0);
  };
  return finite_max(keepdims) + log(sum(exp(x - finite_max(true)), axis, keepdims));
}

}  // namespace tessel
