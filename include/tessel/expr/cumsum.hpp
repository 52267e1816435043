#pragma once
// jnp.cumsum: the running sum along one axis. A fusion boundary: its operand is made into a tensor,
// each device scans its block, and when the axis is sharded a carry step adds to each block the
// total of the blocks before it along the axis (the devices' partial totals passed down the axis
// in order, not a gather of the whole tensor).
#include <cstdint>

#include "tessel/expr/checks.hpp"
#include "tessel/expr/elementwise.hpp"
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

namespace detail {
template <class N>
auto make_cumsum(N const& n, int axis) {
  return CumsumNode<ops::sum_reduce, N>{{n}, {one_axis("cumsum", "axis", n.shape(), axis), n.shape()}};
}
}  // namespace detail

// jnp.cumsum(x, axis): integers keep their dtype (and wrap, as XLA's adds do); bool counts in
// int32, as in JAX.
template <class X>
  requires(Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>)
auto cumsum(X const& x, int axis) {
  if constexpr (std::same_as<expr_value_t<node_t<X>>, bool>) return cumsum(astype<std::int32_t>(x), axis);
  else return detail::make_cumsum(as_node(x), axis);
}

}  // namespace tessel
