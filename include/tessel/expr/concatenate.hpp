#pragma once
// jnp.concatenate. A fusion boundary: every operand is made into a tensor with one common
// sharding, which leaves the concatenated dimension unsharded (operands sharded along it are
// gathered first: explain shows it), and each device copies its blocks side by side.
#include <cstdint>
#include <tuple>

#include "tessel/expr/checks.hpp"
#include "tessel/expr/elementwise.hpp"
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

namespace detail {
// An operand in the concatenation's dtype: itself, or converted (as jnp.concatenate promotes).
template <class R, class N>
constexpr auto in_dtype(N const& n) {
  if constexpr (std::same_as<expr_value_t<N>, R>) return n;
  else return astype<R>(n);
}
}  // namespace detail

// jnp.concatenate((xs...), axis). The axis comes first because a C++ parameter pack must be last:
// concatenate(0, a, b, exp(c)). Operands of different dtypes are promoted as jnp.concatenate
// promotes them (float32 with bfloat16 gives float32), each converted before it is copied.
template <class... X>
  requires(sizeof...(X) >= 1 && (Operand<X> && ...) && (!std::is_arithmetic_v<std::remove_cvref_t<X>> && ...))
auto concatenate(int axis, X const&... xs) {
  using R = promote_t<expr_value_t<node_t<X>>...>;
  static_assert(!std::same_as<R, detail::NeedsInt16>,
                "tessel: concatenating int8 with uint8 promotes to int16 (jnp.promote_types), which tessel does not "
                "store; astype<std::int32_t>() one operand first");
  auto nodes = std::tuple{detail::in_dtype<R>(as_node(xs))...};
  Shape const* shapes[sizeof...(X)];
  std::size_t k = 0;
  std::apply([&](auto const&... n) { ((shapes[k++] = &n.shape()), ...); }, nodes);
  Shape shape = detail::concat_shape(shapes, sizeof...(X), axis);
  Mesh const* mesh = nullptr;
  std::apply([&](auto const&... n) {
    ((detail::check_same_devices("concatenate", mesh, detail::mesh_of(n)), mesh = mesh ? mesh : detail::mesh_of(n)), ...);
  }, nodes);
  return std::apply(
      [&](auto const&... n) {
        return ConcatNode<std::remove_cvref_t<decltype(n)>...>{{n...}, {static_cast<std::uint8_t>(axis), shape}};
      },
      nodes);
}

}  // namespace tessel
