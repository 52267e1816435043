#pragma once
// jnp.concatenate. A fusion boundary: every operand is made into a tensor with one common
// sharding, which leaves the concatenated dimension unsharded (operands sharded along it are
// gathered first: explain shows it), and each device copies its blocks side by side.
#include <cstdint>
#include <tuple>

#include "tessel/expr/checks.hpp"
#include "tessel/expr/node.hpp"

namespace tessel {

struct Concatenate {
  static constexpr NodeKind kind = NodeKind::concatenate;
  struct Data {
    std::uint8_t axis;
    Shape shape;
  };
  template <class First, class... Rest>
  using value_type = expr_value_t<First>;
  static Shape const& shape(Data const& d) { return d.shape; }
  static constexpr char const* name(Data const&) { return "concatenate"; }
  static void describe(Data const& d, auto& node, auto&) { node.axis = d.axis; }
  static void sign(Data const& d, Shape const&, auto& sink) { sink.word(d.axis); }
};
template <class... Children>
using ConcatNode = Node<Concatenate, Children...>;

namespace detail {
// Checks ranks and sizes (naming the operand, dimension and sizes that disagree) and returns the
// result's shape; `axis` is normalized in place.
Shape concat_shape(Shape const* const* shapes, std::size_t count, int& axis);
}  // namespace detail

// jnp.concatenate((xs...), axis). The axis comes first because a C++ parameter pack must be last:
// concatenate(0, a, b, exp(c)). Operands share one dtype (astype<>() one of them otherwise).
template <class... X>
  requires(sizeof...(X) >= 1 && (Operand<X> && ...) && (!std::is_arithmetic_v<std::remove_cvref_t<X>> && ...))
auto concatenate(int axis, X const&... xs) {
  using First = expr_value_t<node_t<std::tuple_element_t<0, std::tuple<X...>>>>;
  static_assert((std::same_as<expr_value_t<node_t<X>>, First> && ...),
                "tessel: concatenate needs operands of one dtype; use astype<>() on the others");
  auto nodes = std::tuple{as_node(xs)...};
  Shape const* shapes[sizeof...(X)];
  std::size_t k = 0;
  std::apply([&](auto const&... n) { ((shapes[k++] = &n.shape()), ...); }, nodes);
  Shape shape = detail::concat_shape(shapes, sizeof...(X), axis);
  Mesh const* mesh = nullptr;
  std::apply([&](auto const&... n) {
    ((detail::check_same_devices("concatenate", mesh, detail::mesh_of(n)), mesh = mesh ? mesh : detail::mesh_of(n)), ...);
  }, nodes);
  return ConcatNode<node_t<X>...>{nodes, {static_cast<std::uint8_t>(axis), shape}};
}

}  // namespace tessel
