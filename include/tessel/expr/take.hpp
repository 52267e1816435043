#pragma once
// jnp.take(table, indices, axis) with int32 or int64 indices, JAX's default mode ("fill"): a negative index
// counts from the end once; an index still outside the table gives NaN (INT32_MIN for int32
// tables) for its whole slice. The result's shape is table.shape[:axis] + indices.shape +
// table.shape[axis + 1:]. An embedding lookup is take(table, token_ids): with the table sharded
// over its vocabulary, each device looks up the rows it holds and an all-reduce sums the pieces
// (Megatron's vocab-parallel embedding); sharded over its features, the result is feature-sharded
// with no collective.
#include <cstdint>

#include "tessel/expr/checks.hpp"
#include "tessel/expr/node.hpp"

namespace tessel {

struct Take {
  static constexpr NodeKind kind = NodeKind::take;
  struct Data {
    std::uint8_t axis;
    Shape shape;
  };
  template <class Table, class Indices>
  using value_type = expr_value_t<Table>;
  static Shape const& shape(Data const& d) { return d.shape; }
  static constexpr char const* name(Data const&) { return "take"; }
  static void describe(Data const& d, auto& node, auto&) { node.axis = d.axis; }
  static void sign(Data const& d, Shape const&, auto& sink) { sink.word(d.axis); }
};
template <class Table, class Indices>
using TakeNode = Node<Take, Table, Indices>;

namespace detail {
// Checks the axis and the result's rank (naming both shapes) and returns the result's shape;
// `axis` is normalized in place.
Shape take_shape(Shape const& table, Shape const& indices, int& axis);
}  // namespace detail

template <class T, class I>
  requires(Operand<T> && Operand<I> && !std::is_arithmetic_v<std::remove_cvref_t<T>> &&
           !std::is_arithmetic_v<std::remove_cvref_t<I>>)
auto take(T const& table, I const& indices, int axis = 0) {
  auto t = as_node(table);
  auto i = as_node(indices);
  static_assert(std::same_as<expr_value_t<decltype(i)>, std::int32_t> || std::same_as<expr_value_t<decltype(i)>, std::int64_t>,
                "tessel: take's indices are int32 or int64; use astype<std::int32_t>()");
  static_assert(!std::same_as<expr_value_t<decltype(t)>, bool>, "tessel: take from a comparison after astype<>()");
  detail::check_same_devices("take", detail::mesh_of(t), detail::mesh_of(i));
  Shape shape = detail::take_shape(t.shape(), i.shape(), axis);
  return TakeNode<decltype(t), decltype(i)>{{t, i}, {static_cast<std::uint8_t>(axis), shape}};
}

}  // namespace tessel
