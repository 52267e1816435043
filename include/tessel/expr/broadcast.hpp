#pragma once
// lax.broadcast_in_dim and what is made of it: jnp.broadcast_to, jnp.repeat and jnp.tile. A
// broadcast is a view (expr/view.hpp): read in place, with stride 0 along its new and widened
// dimensions, by the fused kernel that consumes it. repeat and tile are a broadcast then a reshape
// that merges each repeated dimension with its copies; a repeat along a sharded dimension keeps
// its tiling (each device repeats the rows it holds: grouped-query attention's KV heads stay split
// like the query heads), a tile gathers the dimensions it tiles.
#include <cstdint>
#include <initializer_list>

#include "tessel/expr/view.hpp"

namespace tessel {
namespace detail {

// Checks lax.broadcast_in_dim's rules, naming the dimension and sizes at fault: one result
// dimension per operand dimension, strictly increasing, each of the operand's size or widened
// from 1.
constexpr ViewSpec broadcast_view(Shape const& shape, Shape const& out, FixedVector<int, max_rank> const& dims,
                                  StaticErrors* errors = nullptr) {
  ViewSpec v;
  v.kind = ViewKind::broadcast;
  Message m;
  if (dims.size() != shape.size())
    m << "broadcast_in_dim: the operand " << shape << " has rank " << shape.size() << ", but "
      << dims.size() << " broadcast dimensions were given";
  for (std::size_t d = 0; d < dims.size() && m.empty(); ++d) {
    int j = dims[d];
    if (j < 0 || j >= out.rank() || (d > 0 && j <= dims[d - 1])) {
      m << "broadcast_in_dim: broadcast dimension " << j << " of operand dimension " << d
        << " is out of range or out of order for the result " << out << " (they must increase)";
    } else if (shape[d] != 1 && shape[d] != out[static_cast<std::size_t>(j)]) {
      m << "broadcast_in_dim: operand dimension " << d << " of " << shape << " has size " << shape[d]
        << ", but result dimension " << j << " of " << out << " has size " << out[static_cast<std::size_t>(j)]
        << " (a broadcast keeps a size or widens a 1)";
    } else {
      v.perm.push_back(static_cast<std::uint8_t>(j));
    }
  }
  if (!m.empty()) check_failed(m, errors);
  return v;
}

// The result of jnp.repeat along `axis` as a broadcast to shape[:axis+1] + (repeats,) +
// shape[axis+1:] and its reshape.
constexpr Shape repeated_shape(Shape shape, std::size_t axis, std::int64_t repeats) {
  shape[axis] *= repeats;
  return shape;
}

}  // namespace detail

namespace lax {
// lax.broadcast_in_dim(x, shape, broadcast_dimensions): operand dimension d becomes result
// dimension broadcast_dimensions[d]; the others are new.
template <ViewOperand X>
constexpr auto broadcast_in_dim(X const& x, Shape const& shape, std::initializer_list<int> broadcast_dimensions) {
  auto n = as_node(x);
  (void)shape.num_elements();  // checks the sizes
  auto v = tessel::detail::broadcast_view(n.shape(), shape, tessel::detail::list_of(broadcast_dimensions, "broadcast_in_dim"),
                                  tessel::detail::errors_of(n));
  return tessel::detail::make_view(n, v, shape);
}
}  // namespace lax

// jnp.broadcast_to(x, shape): NumPy's rule, dimensions aligned from the right.
template <ViewOperand X>
constexpr auto broadcast_to(X const& x, Shape const& shape) {
  auto n = as_node(x);
  Shape const& in = n.shape();
  FixedVector<int, max_rank> dims;
  for (std::size_t d = 0; d < in.size(); ++d) dims.push_back(static_cast<int>(shape.size() - in.size() + d));
  if (in.size() > shape.size()) {
    Message m;
    m << "broadcast_to: cannot broadcast " << in << " to the lower rank " << shape;
    detail::check_failed(m, detail::errors_of(n));
    dims.clear();
  }
  return detail::make_view(n, detail::broadcast_view(in, shape, dims, detail::errors_of(n)), shape);
}

// jnp.repeat(x, repeats, axis): each slice along `axis` repeated `repeats` times in place
// ([a, b] -> [a, a, b, b]).
template <ViewOperand X>
constexpr auto repeat(X const& x, std::int64_t repeats, int axis) {
  auto n = as_node(x);
  Shape const& in = n.shape();
  Message m;
  int const rank = in.rank();
  int const wrapped = axis < 0 ? axis + rank : axis;
  if (wrapped < 0 || wrapped >= rank) m << "repeat: axis " << axis << " is out of range for shape " << in << " of rank " << rank;
  else if (repeats < 0) m << "repeat: repeats is " << repeats << "; it must be >= 0";
  else if (in.size() + 1 > max_rank) m << "repeat: the broadcast " << in << " plus a dimension exceeds rank " << max_rank;
  std::size_t const a = m.empty() ? static_cast<std::size_t>(wrapped) : 0;
  if (!m.empty()) {
    detail::check_failed(m, detail::errors_of(n));
    repeats = 1;
  }
  Shape wide;
  FixedVector<int, max_rank> dims;
  for (std::size_t d = 0; d < in.size() && wide.size() + 2 <= max_rank; ++d) {
    dims.push_back(static_cast<int>(d <= a ? d : d + 1));
    wide.push_back(in[d]);
    if (d == a) wide.push_back(repeats);
  }
  auto b = detail::make_view(n, detail::broadcast_view(in, wide, dims, detail::errors_of(n)), wide);
  return reshape(b, in.empty() ? in : detail::repeated_shape(in, a, repeats));
}
// Without an axis, x flattened first (jnp.repeat's default).
template <ViewOperand X>
constexpr auto repeat(X const& x, std::int64_t repeats) {
  return repeat(reshape(x, {-1}), repeats, 0);
}

// jnp.tile(x, reps): x repeated reps[d] times along each dimension ([a, b] -> [a, b, a, b]); reps
// shorter than x's rank is padded with 1s in front, x of lower rank gets leading dimensions of 1.
template <ViewOperand X>
constexpr auto tile(X const& x, std::initializer_list<std::int64_t> reps) {
  auto n = as_node(x);
  Shape const& in = n.shape();
  std::size_t const rank = in.size() > reps.size() ? in.size() : reps.size();
  if (2 * rank > max_rank) detail::throw_list_too_long("tile", 2 * rank);
  Shape wide, out;
  FixedVector<int, max_rank> dims;
  auto r = reps.begin();
  for (std::size_t d = 0; d < rank; ++d) {
    std::int64_t rep = d + reps.size() < rank ? 1 : *r++;
    std::int64_t size = d + in.size() < rank ? 1 : in[d + in.size() - rank];
    if (rep < 0) {
      Message m;
      m << "tile: reps[" << d << "] is " << rep << "; repetitions must be >= 0";
      detail::check_failed(m, detail::errors_of(n));
      rep = 1;
    }
    if (d + in.size() >= rank) dims.push_back(static_cast<int>(2 * d + 1));
    wide.push_back(rep);
    wide.push_back(size);
    out.push_back(rep * size);
  }
  auto b = detail::make_view(n, detail::broadcast_view(in, wide, dims, detail::errors_of(n)), wide);
  return reshape(b, out);
}

}  // namespace tessel
