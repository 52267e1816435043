#pragma once
// jnp.argmax / jnp.argmin: the int32 index of the largest (smallest) element along one axis, or of
// the flattened array (axis = none). JAX's rules: the first index wins a tie (-0.0 and 0.0 tie),
// and a NaN wins over every number (the first NaN when there are several). Over a sharded axis each
// device finds its own best (value, index); an all-reduce of the values and then one of the indices
// of the devices holding the winning value give the first best index.
#include <cstdint>
#include <optional>

#include "tessel/expr/reduce.hpp"

namespace tessel {

template <bool Max>
struct ArgReduce {
  static constexpr NodeKind kind = NodeKind::arg_reduce;
  struct Data {
    FixedVector<std::uint8_t, max_rank> axes;  // one axis, or every axis (axis = none)
    bool keepdims;
    Shape shape;
  };
  template <class Child>
  using value_type = std::int32_t;
  static Shape const& shape(Data const& d) { return d.shape; }
  static constexpr char const* name(Data const&) { return Max ? "argmax" : "argmin"; }
  static void describe(Data const& d, auto& node, auto&) {
    node.axes = d.axes;
    node.keepdims = d.keepdims;
    node.combine = Max ? ReduceOp::max : ReduceOp::min;
  }
  static void sign(Data const& d, Shape const&, auto& sink) {
    sink.word(d.keepdims);
    for (auto a : d.axes) sink.word(a);
    sink.word(0xfffc);
  }
};
template <bool Max, class Child>
using ArgReduceNode = Node<ArgReduce<Max>, Child>;

namespace detail {
template <bool Max, class X>
auto make_arg_reduce(X const& x, std::optional<int> axis, bool keepdims) {
  auto n = as_node(x);
  static_assert(!std::same_as<expr_value_t<decltype(n)>, bool>, "tessel: argmax of a comparison after astype<int32_t>()");
  char const* op = Max ? "argmax" : "argmin";
  auto axes = axis ? normalize_axes(op, Axes(*axis), n.shape()) : normalize_axes(op, Axes(), n.shape());
  return ArgReduceNode<Max, decltype(n)>{{n}, {axes, keepdims, reduced_shape(n.shape(), axes, keepdims)}};
}
}  // namespace detail

template <class X>
  requires(Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>)
auto argmax(X const& x, std::optional<int> axis = std::nullopt, bool keepdims = false) {
  return detail::make_arg_reduce<true>(x, axis, keepdims);
}
template <class X>
  requires(Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>)
auto argmin(X const& x, std::optional<int> axis = std::nullopt, bool keepdims = false) {
  return detail::make_arg_reduce<false>(x, axis, keepdims);
}

}  // namespace tessel
