#pragma once
// lax.top_k(x, k, axis): the k largest elements along one axis (the last by default), largest
// first, and their int32 indices. JAX's order is total: NaN above +inf, 0.0 above -0.0, a NaN with
// its sign bit set below -inf, and equal elements in index order (the first wins), so the result
// is one array, not one of several valid ones.
//
// The values and the indices are two nodes of one op (`TopK<false>` and `TopK<true>`); each runs
// the selection. Over a sharded axis each device selects the k best of its block (at most its
// block's length), an all-gather brings every device's candidates to the group, and each device
// selects the k best among them: what crosses devices is k candidates per device, never the axis.
#include <cstdint>
#include <utility>

#include "tessel/expr/checks.hpp"
#include "tessel/expr/node.hpp"

namespace tessel {

struct TopKData {
  std::uint8_t axis;
  Shape shape;  // the operand's, with `axis` of length k
};

template <bool Indices>
struct TopK {
  static constexpr NodeKind kind = NodeKind::top_k;
  using Data = TopKData;
  template <class Child>
  using value_type = std::conditional_t<Indices, std::int32_t, expr_value_t<Child>>;
  static Shape const& shape(Data const& d) { return d.shape; }
  static constexpr char const* name(Data const&) { return "top_k"; }
  static void describe(Data const& d, auto& node, auto&) {
    node.axis = d.axis;
    node.indices = Indices;
  }
  // k is the result's length along the axis, which the operand's shape does not give.
  static void sign(Data const& d, Shape const&, auto& sink) {
    sink.word(d.axis);
    sink.word(static_cast<std::uint64_t>(d.shape[d.axis]));
    sink.word(Indices ? 0xfff9 : 0xfffa);
  }
};

namespace detail {
// Checks k against the axis (naming both and the operand's shape) and returns the result's shape;
// `axis` is normalized in place.
Shape top_k_shape(Shape const& operand, std::int64_t k, int& axis);
}  // namespace detail

namespace lax {

// (values, indices) of the k largest elements along `axis`, as lax.top_k returns them:
// `auto [values, indices] = lax::top_k(logits, 50);`.
template <class X>
  requires(Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>)
auto top_k(X const& x, std::int64_t k, int axis = -1) {
  auto n = as_node(x);
  static_assert(!std::same_as<expr_value_t<decltype(n)>, bool>, "tessel: top_k of a comparison after astype<>()");
  Shape shape = tessel::detail::top_k_shape(n.shape(), k, axis);
  TopKData data{static_cast<std::uint8_t>(axis), shape};
  return std::pair{Node<TopK<false>, decltype(n)>{{n}, data}, Node<TopK<true>, decltype(n)>{{n}, data}};
}

}  // namespace lax
}  // namespace tessel
