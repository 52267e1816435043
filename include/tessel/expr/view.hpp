#pragma once
// Views: jnp.transpose, jnp.reshape, lax.slice / lax.slice_in_dim and lax.broadcast_in_dim
// (expr/broadcast.hpp: jnp.broadcast_to, jnp.repeat, jnp.tile). A view moves no data of its
// own: inside a fused region it is a leaf that reads its operand's shards with other strides and
// an offset, so `exp(transpose(x)) + y` is one kernel. Shardings go through it (GSPMD's rules): a
// transpose permutes the spec; a slice keeps the spec of the dimensions it takes whole and needs
// the sliced ones unsharded; a reshape keeps the sharding of each group of dimensions it splits or
// merges when every device's block stays one contiguous piece (then it is zero-copy), otherwise
// the planner unshards that group first and says so in explain; a broadcast keeps the spec of the
// dimensions it maps and leaves the new or widened ones unsharded (read with stride 0).
#include <cstdint>
#include <initializer_list>

#include "tessel/expr/checks.hpp"
#include "tessel/expr/node.hpp"

namespace tessel {

enum class ViewKind : std::uint8_t { transpose, reshape, slice, broadcast };

// What a view does, as plain data (the planner and the plan cache read it).
struct ViewSpec {
  ViewKind kind = ViewKind::transpose;
  // transpose: result dimension j is operand dimension perm[j]; broadcast: operand dimension d is
  // result dimension perm[d] (lax.broadcast_in_dim's broadcast_dimensions)
  FixedVector<std::uint8_t, max_rank> perm;
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
  static constexpr Shape const& shape(Data const& d) { return d.shape; }
  static constexpr char const* name(Data const& d) {
    switch (d.view.kind) {
      case ViewKind::transpose: return "transpose";
      case ViewKind::reshape: return "reshape";
      case ViewKind::slice: return "slice";
      case ViewKind::broadcast: return "broadcast_in_dim";
    }
    return "view";
  }
  static constexpr void describe(Data const& d, auto& node, auto&) { node.view = d.view; }
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
// permutation at fault) and returns the view and the result's shape. constexpr, with the failed
// check's message kept in `errors` while static_jit builds an expression (expr/node.hpp).

constexpr void append_list(Message& m, FixedVector<int, max_rank> const& v) {
  m << "(";
  for (std::size_t k = 0; k < v.size(); ++k) m << (k ? ", " : "") << v[k];
  m << (v.size() == 1 ? ",)" : ")");
}

constexpr ViewSpec transpose_view(Shape const& shape, FixedVector<int, max_rank> const& perm, bool reverse,
                                  StaticErrors* errors = nullptr) {
  ViewSpec v;
  v.kind = ViewKind::transpose;
  int rank = shape.rank();
  if (reverse) {
    for (int d = rank; d-- > 0;) v.perm.push_back(static_cast<std::uint8_t>(d));
    return v;
  }
  Message m;
  if (static_cast<int>(perm.size()) != rank) {
    m << "transpose: axes ";
    append_list(m, perm);
    m << " name " << perm.size() << " dimensions, but the operand " << shape << " has " << rank;
  }
  bool seen[max_rank]{};
  for (std::size_t k = 0; k < perm.size() && m.empty(); ++k) {
    int a = perm[k];
    int d = a < 0 ? a + rank : a;
    if (d < 0 || d >= rank) {
      m << "transpose: axis " << a << " in ";
      append_list(m, perm);
      m << " is out of range for the operand " << shape << " of rank " << rank;
    } else if (seen[d]) {
      m << "transpose: axes ";
      append_list(m, perm);
      m << " are not a permutation: dimension " << d << " appears twice";
    } else {
      seen[d] = true;
      v.perm.push_back(static_cast<std::uint8_t>(d));
    }
  }
  if (!m.empty()) {
    check_failed(m, errors);
    return transpose_view(shape, {}, true);
  }
  return v;
}

constexpr ViewSpec slice_view(Shape const& shape, FixedVector<std::int64_t, max_rank> const& start,
                              FixedVector<std::int64_t, max_rank> const& limit, StaticErrors* errors = nullptr) {
  ViewSpec v;
  v.kind = ViewKind::slice;
  Message m;
  if (start.size() != shape.size() || limit.size() != shape.size())
    m << "slice: the operand " << shape << " has rank " << shape.size() << ", but " << start.size() << " start and "
      << limit.size() << " limit indices were given";
  for (std::size_t d = 0; d < shape.size() && m.empty(); ++d) {
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > shape[d])
      m << "slice: dimension " << d << " of the operand " << shape << " has size " << shape[d] << "; the slice ["
        << start[d] << ":" << limit[d] << "] needs 0 <= start <= limit <= " << shape[d];
    v.start.push_back(start[d]);
    v.limit.push_back(limit[d]);
  }
  if (!m.empty()) {
    check_failed(m, errors);
    v.start = Shape(shape.size(), 0);
    v.limit = shape;
  }
  return v;
}

constexpr ViewSpec slice_in_dim_view(Shape const& shape, std::int64_t start, std::int64_t limit, int axis,
                                     StaticErrors* errors = nullptr) {
  int rank = shape.rank();
  int d = axis < 0 ? axis + rank : axis;
  if (d < 0 || d >= rank) {
    Message m;
    m << "slice_in_dim: axis " << axis << " is out of range for the operand " << shape << " of rank " << rank;
    check_failed(m, errors);
    return slice_view(shape, FixedVector<std::int64_t, max_rank>(shape.size(), 0), shape, errors);
  }
  FixedVector<std::int64_t, max_rank> s, l;
  for (int k = 0; k < rank; ++k) {
    s.push_back(k == d ? start : 0);
    l.push_back(k == d ? limit : shape[static_cast<std::size_t>(k)]);
  }
  return slice_view(shape, s, l, errors);
}

// new_shape may hold one -1, inferred from the others.
constexpr Shape reshape_shape(Shape const& shape, FixedVector<std::int64_t, max_rank> const& new_shape,
                              StaticErrors* errors = nullptr) {
  Shape known_dims;  // its num_elements() refuses a product that overflows
  int inferred = -1;
  Message m;
  for (std::size_t d = 0; d < new_shape.size() && m.empty(); ++d) {
    if (new_shape[d] == -1) {
      if (inferred >= 0)
        m << "reshape: the new shape has -1 at dimensions " << inferred << " and " << d << "; only one can be inferred";
      inferred = static_cast<int>(d);
    } else if (new_shape[d] < 0) {
      m << "reshape: dimension " << d << " of the new shape is " << new_shape[d] << "; sizes are >= 0 (or one -1)";
    } else {
      known_dims.push_back(new_shape[d]);
    }
  }
  Shape out;
  if (m.empty()) {
    std::int64_t known = known_dims.num_elements();
    for (auto n : new_shape) out.push_back(n);
    std::int64_t total = shape.num_elements();
    if (inferred >= 0) {
      if (known == 0 || total % known != 0)
        m << "reshape: cannot infer the -1 at dimension " << inferred << ": " << total << " elements of " << shape
          << " are not a multiple of " << known << " (the product of the other sizes)";
      else
        out[static_cast<std::size_t>(inferred)] = total / known;
    }
    if (m.empty() && out.num_elements() != total)
      m << "reshape: cannot reshape " << shape << " (" << total << " elements) into " << out << " ("
        << out.num_elements() << " elements)";
  }
  if (!m.empty()) {
    check_failed(m, errors);
    return shape;
  }
  return out;
}

constexpr Shape view_shape(ViewSpec const& v, Shape const& operand) {
  Shape out;
  if (v.kind == ViewKind::transpose) {
    for (auto p : v.perm) out.push_back(operand[p]);
  } else if (v.kind == ViewKind::slice) {
    for (std::size_t d = 0; d < operand.size(); ++d) out.push_back(v.limit[d] - v.start[d]);
  }
  return out;  // reshape: the shape is the node's own
}

template <class X>
constexpr auto make_view(X const& x, ViewSpec const& v, Shape const& shape) {
  auto n = as_node(x);
  return ViewNode<decltype(n)>{{n}, {v, shape}};
}

// Fails naming the op unless `count` values fit in a rank (max_rank).
[[noreturn]] void throw_list_too_long(char const* op, std::size_t count);
constexpr void check_list_length(char const* op, std::size_t count) {
  if (count > max_rank) throw_list_too_long(op, count);
}
template <class T>
constexpr FixedVector<T, max_rank> list_of(std::initializer_list<T> values, char const* op) {
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
constexpr auto transpose(X const& x) {
  auto n = as_node(x);
  auto v = detail::transpose_view(n.shape(), {}, true);
  return detail::make_view(n, v, detail::view_shape(v, n.shape()));
}
template <ViewOperand X>
constexpr auto transpose(X const& x, std::initializer_list<int> axes) {
  auto n = as_node(x);
  auto v = detail::transpose_view(n.shape(), detail::list_of(axes, "transpose"), false, detail::errors_of(n));
  return detail::make_view(n, v, detail::view_shape(v, n.shape()));
}

// jnp.reshape(x, new_shape) in row-major (C) order; one entry may be -1.
template <ViewOperand X>
constexpr auto reshape(X const& x, std::initializer_list<std::int64_t> new_shape) {
  auto n = as_node(x);
  ViewSpec v;
  v.kind = ViewKind::reshape;
  return detail::make_view(
      n, v, detail::reshape_shape(n.shape(), detail::list_of(new_shape, "reshape"), detail::errors_of(n)));
}

// ... to a shape known only at run time (a model's sizes read from its file, say).
template <ViewOperand X>
constexpr auto reshape(X const& x, Shape const& new_shape) {
  auto n = as_node(x);
  ViewSpec v;
  v.kind = ViewKind::reshape;
  return detail::make_view(n, v, detail::reshape_shape(n.shape(), new_shape, detail::errors_of(n)));
}

// lax.slice(x, start_indices, limit_indices): the box [start, limit) of x (unit strides).
template <ViewOperand X>
constexpr auto slice(X const& x, std::initializer_list<std::int64_t> start, std::initializer_list<std::int64_t> limit) {
  auto n = as_node(x);
  auto v = detail::slice_view(n.shape(), detail::list_of(start, "slice"), detail::list_of(limit, "slice"),
                              detail::errors_of(n));
  return detail::make_view(n, v, detail::view_shape(v, n.shape()));
}

// lax.slice_in_dim(x, start, limit, axis): x[..., start:limit, ...] along one dimension.
template <ViewOperand X>
constexpr auto slice_in_dim(X const& x, std::int64_t start, std::int64_t limit, int axis = 0) {
  auto n = as_node(x);
  auto v = detail::slice_in_dim_view(n.shape(), start, limit, axis, detail::errors_of(n));
  return detail::make_view(n, v, detail::view_shape(v, n.shape()));
}

}  // namespace tessel
