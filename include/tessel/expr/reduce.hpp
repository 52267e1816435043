#pragma once
// Reductions over one, several or all axes (jnp.sum, mean, max, min, prod with keepdims), and
// softmax, log_softmax and logsumexp written with them, as jax.nn writes them.
#include <algorithm>
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
  constexpr Axes() = default;  // all axes
  constexpr Axes(int axis) : axes_{axis}, all_(false) {}  // NOLINT: implicit by design
  constexpr Axes(std::initializer_list<int> axes) : all_(false) {
    for (int a : axes) axes_.push_back(a);
  }
  [[nodiscard]] constexpr bool all() const { return all_; }
  [[nodiscard]] constexpr FixedVector<int, max_rank, ReductionAxesCapacity> const& list() const { return axes_; }

 private:
  FixedVector<int, max_rank, ReductionAxesCapacity> axes_;
  bool all_ = true;
};

namespace detail {
// Normalizes axes against a shape (sorted, non-negative); fails naming the axis and the shape.
// The axes as sorted dimensions of `shape` (negative ones count from the end); fails naming an
// axis out of range or given twice.
constexpr FixedVector<std::uint8_t, max_rank> normalize_axes(char const* op, Axes const& axes, Shape const& shape,
                                                             StaticErrors* errors = nullptr) {
  FixedVector<std::uint8_t, max_rank> out;
  int rank = shape.rank();
  if (axes.all()) {
    for (int d = 0; d < rank; ++d) out.push_back(static_cast<std::uint8_t>(d));
    return out;
  }
  for (int a : axes.list()) {
    int d = a < 0 ? a + rank : a;
    Message m;
    if (d < 0 || d >= rank) m << op << ": axis " << a << " is out of range for shape " << shape << " of rank " << rank;
    else if (std::find(out.begin(), out.end(), static_cast<std::uint8_t>(d)) != out.end())
      m << op << ": axis " << a << " is given twice for shape " << shape;
    if (!m.empty()) {
      check_failed(m, errors);
      continue;
    }
    out.push_back(static_cast<std::uint8_t>(d));
  }
  // Sorted by insertion (at most max_rank axes; std::sort's inlined heap code trips GCC's
  // -Warray-bounds on the fixed capacity).
  for (std::size_t i = 1; i < out.size(); ++i) {
    std::uint8_t v = out[i];
    std::size_t j = i;
    for (; j > 0 && out[j - 1] > v; --j) out[j] = out[j - 1];
    out[j] = v;
  }
  return out;
}
constexpr Shape reduced_shape(Shape const& shape, FixedVector<std::uint8_t, max_rank> const& axes, bool keepdims) {
  Shape out;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<std::uint8_t>(d)) != axes.end();
    if (!reduced) out.push_back(shape[d]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

template <class Op, class X>
constexpr auto make_reduce(X const& x, Axes const& axes, bool keepdims) {
  auto n = as_node(x);
  auto normalized = normalize_axes(Op::name, axes, n.shape(), errors_of(n));
  return ReduceNode<Op, decltype(n)>{{n}, {normalized, keepdims, reduced_shape(n.shape(), normalized, keepdims)}};
}

// Integers narrower than int32, and bool, sum and multiply in int32 (JAX's default integer:
// jnp.sum of a mask counts it; JAX gives uint32 for uint8, which tessel does not store). max and
// min keep the dtype (on bool: any and all).
template <class V>
inline constexpr bool widened_by_sum = std::same_as<V, bool> || std::same_as<V, std::int8_t> || std::same_as<V, std::uint8_t>;

template <class Op, class X>
constexpr auto make_accumulating_reduce(X const& x, Axes const& axes, bool keepdims) {
  if constexpr (widened_by_sum<expr_value_t<node_t<X>>>) return make_reduce<Op>(astype<std::int32_t>(x), axes, keepdims);
  else return make_reduce<Op>(x, axes, keepdims);
}
}  // namespace detail

#define TESSEL_REDUCTION(fn, make, Op)                                              \
  template <class X>                                                                \
    requires(Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>)          \
  constexpr auto fn(X const& x, Axes const& axes = {}, bool keepdims = false) {               \
    return detail::make<ops::Op>(x, axes, keepdims);                                \
  }

TESSEL_REDUCTION(sum, make_accumulating_reduce, sum_reduce)
// jnp.mean of integers and bool sums and divides in float32 (int64: float64).
template <class X>
  requires(Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>)
constexpr auto mean(X const& x, Axes const& axes = {}, bool keepdims = false) {
  using V = expr_value_t<node_t<X>>;
  if constexpr (std::integral<V>) return detail::make_reduce<ops::mean_reduce>(astype<float_of_t<V>>(x), axes, keepdims);
  else return detail::make_reduce<ops::mean_reduce>(x, axes, keepdims);
}
TESSEL_REDUCTION(max, make_reduce, max_reduce)
TESSEL_REDUCTION(min, make_reduce, min_reduce)
TESSEL_REDUCTION(prod, make_accumulating_reduce, prod_reduce)
#undef TESSEL_REDUCTION

// jax.nn.softmax(x, axis): exp(x - max) / sum(exp(x - max)). The exp appears twice, as in JAX, and the
// kernel computes it once per element (runtime/row_cache.hpp).
//
// On 16-bit floats, XLA's own arithmetic (tests/data/jax_half/README.md): the normalizer is a
// reciprocal, rounded to float16 but kept in float32 for bfloat16, whose sum also adds the
// exponentials before they are rounded (XLA's excess precision).
template <class X>
constexpr auto softmax(X const& x, int axis = -1) {
  using V = expr_value_t<node_t<X>>;
  if constexpr (std::same_as<V, bfloat16>) {
    auto e32 = detail::exp_of_shifted(astype<float>(x - max(x, axis, true)));
    auto s = astype<float>(astype<bfloat16>(sum(e32, axis, true)));
    return astype<bfloat16>(astype<bfloat16>(e32) * (1.0f / s));
  } else if constexpr (std::same_as<V, float16>) {
    auto e = detail::exp_of_shifted(x - max(x, axis, true));
    return e * (1.0f / sum(e, axis, true));
  } else {
    auto e = detail::exp_of_shifted(x - max(x, axis, true));
    return e / sum(e, axis, true);
  }
}

// jax.nn.log_softmax(x, axis): shifted - log(sum(exp(shifted)))
template <class X>
constexpr auto log_softmax(X const& x, int axis = -1) {
  auto shifted = x - max(x, axis, true);
  return shifted - log(sum(detail::exp_of_shifted(shifted), axis, true));
}

// jax.nn.logsumexp(x, axis, keepdims): max + log(sum(exp(x - max)))
// JAX shifts by the max only where it is finite (an all -inf row gives -inf, a row holding +inf
// gives +inf, not NaN), so the shifted argument may be positive: plain exp.
template <class X>
constexpr auto logsumexp(X const& x, int axis = -1, bool keepdims = false) {
  auto finite_max = [&](bool keep) {
    auto m = max(x, axis, keep);
    return where(abs(m) < Kokkos::Experimental::infinity_v<float>, m, 0);
  };
  return finite_max(keepdims) + log(sum(exp(x - finite_max(true)), axis, keepdims));
}

}  // namespace tessel
