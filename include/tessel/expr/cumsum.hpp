#pragma once
// jnp.cumsum: the running sum along one axis. A fusion boundary: its operand is made into a tensor,
// each device scans its block, and when the axis is sharded a carry step adds to each block the
// total of the blocks before it along the axis (the devices' partial totals passed down the axis
// in order, not a gather of the whole tensor).
#include <cstdint>

#include "tessel/expr/checks.hpp"
#include "tessel/expr/node.hpp"
#include "tessel/expr/ops.hpp"

namespace tessel {

template <class Op>
struct Cumsum {
  static constexpr NodeKind kind = NodeKind::cumsum;
  using op = Op;
  struct Data {
    std::uint8_t axis;
    Shape shape;
  };
  template <class Child>
  using value_type = expr_value_t<Child>;
  static Shape const& shape(Data const& d) { return d.shape; }
  static constexpr char const* name(Data const&) { return "cumsum"; }
  static void describe(Data const& d, auto& node, auto&) {
    node.axis = d.axis;
    node.combine = Op::combiner;
  }
  static void sign(Data const& d, Shape const&, auto& sink) { sink.word(d.axis); }
};
template <class Op, class Child>
using CumsumNode = Node<Cumsum<Op>, Child>;

// jnp.cumsum(x, axis): int32 stays int32 (and wraps, as XLA's adds do); bool is not accepted.
template <class X>
  requires(Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>)
auto cumsum(X const& x, int axis) {
  auto n = as_node(x);
  static_assert(!std::same_as<expr_value_t<decltype(n)>, bool>, "tessel: cumsum a comparison after astype<int32_t>()");
  return CumsumNode<ops::sum_reduce, decltype(n)>{{n}, {detail::one_axis("cumsum", "axis", n.shape(), axis), n.shape()}};
}

}  // namespace tessel
