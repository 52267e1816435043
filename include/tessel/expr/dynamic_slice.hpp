#pragma once
// lax.dynamic_slice and lax.dynamic_update_slice: a box of an operand whose start is known only at
// run time. A start index is a C++ integer (bound per call, as every scalar is: not part of the
// plan) or a 0-d int32 / int64 tensor (read on the device, so a recorded program can take the
// position as an argument). As in JAX, a negative start counts from the end once, then the start
// is clamped so the box lies inside the operand: min(max(start, 0), operand size - box size). The plan depends on the box's
// sizes alone: a decode step runs one plan for every position.
//
// Shardings: dynamic_slice needs the dimensions its box cuts unsharded (the box may start on any
// device's block) and keeps the others'. dynamic_update_slice keeps the operand's sharding, cut
// dimensions included: each device writes the part of the box its block holds, from an update
// that is whole along the cut dimensions and tiled like the operand along the others. A KV cache
// sharded over heads takes a new token's keys and values with no communication.
#include <cstdint>
#include <initializer_list>
#include <tuple>

#include "tessel/expr/checks.hpp"
#include "tessel/expr/node.hpp"

namespace tessel {

template <NodeKind Kind>
struct DynamicBox {
  static constexpr NodeKind kind = Kind;
  struct Data {
    FixedVector<std::uint8_t, max_rank> dims;  // the operand dimension each start index names
    Shape shape;
  };
  template <class X, class... Rest>
  using value_type = expr_value_t<X>;
  static constexpr Shape const& shape(Data const& d) { return d.shape; }
  static constexpr char const* name(Data const&) {
    return Kind == NodeKind::dynamic_slice ? "dynamic_slice" : "dynamic_update_slice";
  }
  static constexpr void describe(Data const& d, auto& node, auto&) { node.axes = d.dims; }
  // The box's sizes are the result's shape (dynamic_slice), which its operand's does not give.
  static void sign(Data const& d, Shape const& shape, auto& sink) {
    sink.word(d.dims.size());
    for (auto a : d.dims) sink.word(a);
    for (auto n : shape) sink.word(static_cast<std::uint64_t>(n));
    sink.word(0xfffb);
  }
};
using DynamicSlice = DynamicBox<NodeKind::dynamic_slice>;
using DynamicUpdateSlice = DynamicBox<NodeKind::dynamic_update_slice>;

namespace detail {
// Fails naming the op, the index's position and its shape unless every start index is 0-d.
void check_start_shapes(char const* op, Shape const* const* starts, std::size_t count);
// The result's shape of a dynamic_slice: checks that there is one box size per dimension of the
// operand and that each fits (naming the dimension and sizes at fault).
Shape dynamic_slice_shape(Shape const& operand, Shape const& sizes);
// Checks the update's rank and sizes against the operand's (naming the dimension at fault).
void check_update_shape(Shape const& operand, Shape const& update, FixedVector<std::uint8_t, max_rank> const& dims);
FixedVector<std::uint8_t, max_rank> all_dims(char const* op, Shape const& operand, std::size_t starts);
FixedVector<std::uint8_t, max_rank> one_dim(char const* op, Shape const& operand, int axis);

// A start index's node: a C++ integer (a weak int scalar) or an int32 / int64 expression.
template <class N>
inline constexpr bool start_index_v = std::same_as<expr_value_t<N>, Weak<int>> ||
                                      std::same_as<expr_value_t<N>, std::int32_t> ||
                                      std::same_as<expr_value_t<N>, std::int64_t>;

template <class X, class... S>
void check_box_operands(char const* op, X const& x, S const&... starts) {
  static_assert((start_index_v<S> && ...), "tessel: start indices are C++ integers or 0-d int32 / int64 tensors; use "
                                           "astype<std::int32_t>()");
  Shape const* shapes[sizeof...(S) + 1] = {&starts.shape()...};
  check_start_shapes(op, shapes, sizeof...(S));
  Mesh const* mesh = mesh_of(x);
  ((check_same_devices(op, mesh, mesh_of(starts)), mesh = mesh ? mesh : mesh_of(starts)), ...);
}

template <class X, class... S>
auto make_dynamic_slice(X const& x, FixedVector<std::uint8_t, max_rank> dims, Shape const& sizes, S const&... starts) {
  check_box_operands("dynamic_slice", x, starts...);
  Shape shape = dynamic_slice_shape(x.shape(), sizes);
  return Node<DynamicSlice, X, S...>{{x, starts...}, {dims, shape}};
}

template <class X, class U, class... S>
auto make_dynamic_update_slice(X const& x, U const& u, FixedVector<std::uint8_t, max_rank> dims, S const&... starts) {
  static_assert(std::same_as<expr_value_t<X>, expr_value_t<U>>,
                "tessel: dynamic_update_slice needs the update in the operand's dtype (lax's rule); use astype<>()");
  check_box_operands("dynamic_update_slice", x, starts...);
  check_same_devices("dynamic_update_slice", mesh_of(x), mesh_of(u));
  check_update_shape(x.shape(), u.shape(), dims);
  return Node<DynamicUpdateSlice, X, U, S...>{{x, u, starts...}, {dims, x.shape()}};
}
}  // namespace detail

template <class X>
concept BoxOperand = Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>;

namespace lax {

// lax.dynamic_slice(x, start_indices, slice_sizes): start_indices holds one start per dimension,
// e.g. std::tuple{0, pos, 0} with pos an int or a 0-d integer tensor.
template <BoxOperand X, Operand... S>
auto dynamic_slice(X const& x, std::tuple<S...> const& start_indices, Shape const& slice_sizes) {
  auto n = as_node(x);
  auto dims = tessel::detail::all_dims("dynamic_slice", n.shape(), sizeof...(S));
  return std::apply([&](auto const&... s) { return tessel::detail::make_dynamic_slice(n, dims, slice_sizes, as_node(s)...); },
                    start_indices);
}
template <BoxOperand X, Operand... S>
auto dynamic_slice(X const& x, std::tuple<S...> const& start_indices, std::initializer_list<std::int64_t> slice_sizes) {
  return dynamic_slice(x, start_indices, Shape(slice_sizes));
}

// lax.dynamic_slice_in_dim(x, start_index, slice_size, axis): the other dimensions whole.
template <BoxOperand X, Operand S>
auto dynamic_slice_in_dim(X const& x, S const& start_index, std::int64_t slice_size, int axis = 0) {
  auto n = as_node(x);
  auto dims = tessel::detail::one_dim("dynamic_slice_in_dim", n.shape(), axis);
  Shape sizes = n.shape();
  sizes[dims[0]] = slice_size;
  return tessel::detail::make_dynamic_slice(n, dims, sizes, as_node(start_index));
}

// lax.dynamic_update_slice(x, update, start_indices): x with the box at the (clamped) start
// replaced by `update`, of x's dtype and rank.
template <BoxOperand X, BoxOperand U, Operand... S>
auto dynamic_update_slice(X const& x, U const& update, std::tuple<S...> const& start_indices) {
  auto n = as_node(x);
  auto dims = tessel::detail::all_dims("dynamic_update_slice", n.shape(), sizeof...(S));
  return std::apply(
      [&](auto const&... s) { return tessel::detail::make_dynamic_update_slice(n, as_node(update), dims, as_node(s)...); },
      start_indices);
}

// lax.dynamic_update_slice_in_dim(x, update, start_index, axis): a KV cache's write of new
// positions, cache = dynamic_update_slice_in_dim(cache, k_new, pos, 2).
template <BoxOperand X, BoxOperand U, Operand S>
auto dynamic_update_slice_in_dim(X const& x, U const& update, S const& start_index, int axis) {
  auto n = as_node(x);
  auto dims = tessel::detail::one_dim("dynamic_update_slice_in_dim", n.shape(), axis);
  return tessel::detail::make_dynamic_update_slice(n, as_node(update), dims, as_node(start_index));
}

}  // namespace lax
}  // namespace tessel
