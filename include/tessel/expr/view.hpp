#pragma once
// Views: jnp.transpose, jnp.reshape and lax.slice / lax.slice_in_dim. A view moves no data of its
// own: inside a fused region it is a leaf that reads its operand's shards with other strides and
// an offset, so `exp(transpose(x)) + y` is one kernel. Shardings go through it (GSPMD's rules): a
// transpose permutes the spec; a slice keeps the spec of the dimensions it takes whole and needs
// the sliced ones unsharded; a reshape keeps the sharding of each group of dimensions it splits or
// merges when every device's block stays one contiguous piece (then it is zero-copy), otherwise
// the planner unshards that group first and says so in explain.
#include <cstdint>
#include <initializer_list>

#include "tessel/expr/checks.hpp"
#include "tessel/expr/node.hpp"

namespace tessel {

enum class ViewKind : std::uint8_t { transpose, reshape, slice };

// What a view does, as plain data (the planner and the plan cache read it).
struct ViewSpec {
  ViewKind kind = ViewKind::transpose;
  FixedVector<std::uint8_t, max_rank> perm;  // transpose: result dimension j is operand dimension perm[j]
  Shape start, limit;                        // slice: per operand dimension, [start, limit)
  friend bool operator==(ViewSpec const&, ViewSpec const&) = default;
};

struct View {
  static constexpr NodeKind kind = NodeKind::view;
  struct Data {
    ViewSpec view;
    Shape shape;
  };
  template <class Child>
  using value_type = expr_value_t<Child>;
  static Shape const& shape(Data const& d) { return d.shape; }
  static constexpr char const* name(Data const& d) {
    return d.view.kind == ViewKind::transpose ? "transpose" : d.view.kind == ViewKind::reshape ? "reshape" : "slice";
  }
  static void describe(Data const& d, auto& node, auto&) { node.view = d.view; }
  // The kind and every list's length too: a transpose, a slice and a reshape share one type, and
  // their numbers alone can read alike (found by the fuzzer).
  static void sign(Data const& d, Shape const& shape, auto& sink) {
    sink.word(static_cast<std::uint64_t>(d.view.kind));
    sink.word(d.view.perm.size());
    for (auto p : d.view.perm) sink.word(p);
    sink.word(d.view.start.size());
    for (auto n : d.view.start) sink.word(static_cast<std::uint64_t>(n));
    sink.word(d.view.limit.size());
    for (auto n : d.view.limit) sink.word(static_cast<std::uint64_t>(n));
    sink.word(shape.size());
    for (auto n : shape) sink.word(static_cast<std::uint64_t>(n));
    sink.word(0xfffd);
  }
};
template <class Child>
using ViewNode = Node<View, Child>;

namespace detail {
// Each checks its arguments against the operand's shape (naming the dimension, sizes or
// permutation at fault) and returns the view and the result's shape.
ViewSpec transpose_view(Shape const& shape, FixedVector<int, max_rank> const& perm, bool reverse);
ViewSpec slice_view(Shape const& shape, FixedVector<std::int64_t, max_rank> const& start,
                    FixedVector<std::int64_t, max_rank> const& limit);
ViewSpec slice_in_dim_view(Shape const& shape, std::int64_t start, std::int64_t limit, int axis);
// new_shape may hold one -1, inferred from the others.
Shape reshape_shape(Shape const& shape, FixedVector<std::int64_t, max_rank> const& new_shape);
Shape view_shape(ViewSpec const& v, Shape const& operand);

template <class X>
auto make_view(X const& x, ViewSpec const& v, Shape const& shape) {
  auto n = as_node(x);
  return ViewNode<decltype(n)>{{n}, {v, shape}};
}

// Fails naming the op unless `count` values fit in a rank (max_rank).
void check_list_length(char const* op, std::size_t count);
template <class T>
FixedVector<T, max_rank> list_of(std::initializer_list<T> values, char const* op) {
  check_list_length(op, values.size());
  FixedVector<T, max_rank> out;
  for (T v : values) out.push_back(v);
  return out;
}
}  // namespace detail

template <class X>
concept ViewOperand = Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>;

// jnp.transpose(x): dimensions reversed; jnp.transpose(x, axes): result dimension j is x's
// dimension axes[j] (negative axes count from the end).
template <ViewOperand X>
auto transpose(X const& x) {
  auto n = as_node(x);
  auto v = detail::transpose_view(n.shape(), {}, true);
  return detail::make_view(n, v, detail::view_shape(v, n.shape()));
}
template <ViewOperand X>
auto transpose(X const& x, std::initializer_list<int> axes) {
  auto n = as_node(x);
  auto v = detail::transpose_view(n.shape(), detail::list_of(axes, "transpose"), false);
  return detail::make_view(n, v, detail::view_shape(v, n.shape()));
}

// jnp.reshape(x, new_shape) in row-major (C) order; one entry may be -1.
template <ViewOperand X>
auto reshape(X const& x, std::initializer_list<std::int64_t> new_shape) {
  auto n = as_node(x);
  ViewSpec v;
  v.kind = ViewKind::reshape;
  return detail::make_view(n, v, detail::reshape_shape(n.shape(), detail::list_of(new_shape, "reshape")));
}

// lax.slice(x, start_indices, limit_indices): the box [start, limit) of x (unit strides).
template <ViewOperand X>
auto slice(X const& x, std::initializer_list<std::int64_t> start, std::initializer_list<std::int64_t> limit) {
  auto n = as_node(x);
  auto v = detail::slice_view(n.shape(), detail::list_of(start, "slice"), detail::list_of(limit, "slice"));
  return detail::make_view(n, v, detail::view_shape(v, n.shape()));
}

// lax.slice_in_dim(x, start, limit, axis): x[..., start:limit, ...] along one dimension.
template <ViewOperand X>
auto slice_in_dim(X const& x, std::int64_t start, std::int64_t limit, int axis = 0) {
  auto n = as_node(x);
  auto v = detail::slice_in_dim_view(n.shape(), start, limit, axis);
  return detail::make_view(n, v, detail::view_shape(v, n.shape()));
}

}  // namespace tessel
