// Shape checks of the views and of concatenate, made while the expression is built.
#include <algorithm>
#include <format>

#include "tessel/core/error.hpp"
#include "tessel/expr/concatenate.hpp"
#include "tessel/expr/view.hpp"

namespace tessel::detail {

namespace {
std::string list_text(FixedVector<int, max_rank> const& v) {
  std::string s = "(";
  for (std::size_t k = 0; k < v.size(); ++k) s += std::format("{}{}", k ? ", " : "", v[k]);
  return s + (v.size() == 1 ? ",)" : ")");
}
}  // namespace

void check_list_length(char const* op, std::size_t count) {
  if (count > max_rank)
    throw Error(std::format("{}: {} entries given, but tensors have at most {} dimensions", op, count, max_rank));
}

ViewSpec transpose_view(Shape const& shape, FixedVector<int, max_rank> const& perm, bool reverse) {
  ViewSpec v;
  v.kind = ViewKind::transpose;
  int rank = shape.rank();
  if (reverse) {
    for (int d = rank; d-- > 0;) v.perm.push_back(static_cast<std::uint8_t>(d));
    return v;
  }
  if (static_cast<int>(perm.size()) != rank)
    throw Error(std::format("transpose: axes {} name {} dimensions, but the operand {} has {}", list_text(perm),
                            perm.size(), to_string(shape), rank));
  bool seen[max_rank]{};
  for (int a : perm) {
    int d = a < 0 ? a + rank : a;
    if (d < 0 || d >= rank)
      throw Error(std::format("transpose: axis {} in {} is out of range for the operand {} of rank {}", a,
                              list_text(perm), to_string(shape), rank));
    if (seen[d])
      throw Error(std::format("transpose: axes {} are not a permutation: dimension {} appears twice", list_text(perm), d));
    seen[d] = true;
    v.perm.push_back(static_cast<std::uint8_t>(d));
  }
  return v;
}

ViewSpec slice_view(Shape const& shape, FixedVector<std::int64_t, max_rank> const& start,
                    FixedVector<std::int64_t, max_rank> const& limit) {
  if (start.size() != shape.size() || limit.size() != shape.size())
    throw Error(std::format("slice: the operand {} has rank {}, but {} start and {} limit indices were given",
                            to_string(shape), shape.size(), start.size(), limit.size()));
  ViewSpec v;
  v.kind = ViewKind::slice;
  for (std::size_t d = 0; d < shape.size(); ++d) {
    if (start[d] < 0 || start[d] > limit[d] || limit[d] > shape[d])
      throw Error(std::format("slice: dimension {} of the operand {} has size {}; the slice [{}:{}] needs 0 <= start "
                              "<= limit <= {}",
                              d, to_string(shape), shape[d], start[d], limit[d], shape[d]));
    v.start.push_back(start[d]);
    v.limit.push_back(limit[d]);
  }
  return v;
}

ViewSpec slice_in_dim_view(Shape const& shape, std::int64_t start, std::int64_t limit, int axis) {
  int rank = shape.rank();
  int d = axis < 0 ? axis + rank : axis;
  if (d < 0 || d >= rank)
    throw Error(std::format("slice_in_dim: axis {} is out of range for the operand {} of rank {}", axis,
                            to_string(shape), rank));
  FixedVector<std::int64_t, max_rank> s, l;
  for (int k = 0; k < rank; ++k) {
    s.push_back(k == d ? start : 0);
    l.push_back(k == d ? limit : shape[static_cast<std::size_t>(k)]);
  }
  return slice_view(shape, s, l);
}

Shape reshape_shape(Shape const& shape, FixedVector<std::int64_t, max_rank> const& new_shape) {
  Shape known_dims;  // its num_elements() refuses a product that overflows
  int inferred = -1;
  for (std::size_t d = 0; d < new_shape.size(); ++d) {
    if (new_shape[d] == -1) {
      if (inferred >= 0)
        throw Error(std::format("reshape: the new shape has -1 at dimensions {} and {}; only one can be inferred",
                                inferred, d));
      inferred = static_cast<int>(d);
    } else if (new_shape[d] < 0) {
      throw Error(std::format("reshape: dimension {} of the new shape is {}; sizes are >= 0 (or one -1)", d, new_shape[d]));
    } else {
      known_dims.push_back(new_shape[d]);
    }
  }
  std::int64_t known = known_dims.num_elements();
  Shape out;
  for (auto n : new_shape) out.push_back(n);
  std::int64_t total = shape.num_elements();
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      throw Error(std::format("reshape: cannot infer the -1 at dimension {}: {} elements of {} are not a multiple of "
                              "{} (the product of the other sizes)",
                              inferred, total, to_string(shape), known));
    out[static_cast<std::size_t>(inferred)] = total / known;
  }
  if (out.num_elements() != total)
    throw Error(std::format("reshape: cannot reshape {} ({} elements) into {} ({} elements)", to_string(shape), total,
                            to_string(out), out.num_elements()));
  return out;
}

Shape view_shape(ViewSpec const& v, Shape const& operand) {
  Shape out;
  if (v.kind == ViewKind::transpose) {
    for (auto p : v.perm) out.push_back(operand[p]);
  } else if (v.kind == ViewKind::slice) {
    for (std::size_t d = 0; d < operand.size(); ++d) out.push_back(v.limit[d] - v.start[d]);
  }
  return out;  // reshape: the shape is the node's own
}

Shape concat_shape(Shape const* const* shapes, std::size_t count, int& axis) {
  Shape const& first = *shapes[0];
  int rank = first.rank();
  if (rank == 0) throw Error("concatenate: operands must have at least one dimension; got a scalar (shape ())");
  int d = axis < 0 ? axis + rank : axis;
  if (d < 0 || d >= rank)
    throw Error(std::format("concatenate: axis {} is out of range for operands of rank {} (first operand {})", axis,
                            rank, to_string(first)));
  axis = d;
  Shape out = first;
  for (std::size_t k = 1; k < count; ++k) {
    Shape const& s = *shapes[k];
    if (s.rank() != rank)
      throw Error(std::format("concatenate: operand {} has shape {} (rank {}), but operand 0 has shape {} (rank {})", k,
                              to_string(s), s.rank(), to_string(first), rank));
    for (int j = 0; j < rank; ++j) {
      auto ju = static_cast<std::size_t>(j);
      if (j != d && s[ju] != first[ju])
        throw Error(std::format("concatenate along axis {}: operand {} has shape {} and operand 0 has shape {}; they "
                                "differ in dimension {} ({} vs {}), which must match",
                                d, k, to_string(s), to_string(first), j, s[ju], first[ju]));
    }
    out[static_cast<std::size_t>(d)] += s[static_cast<std::size_t>(d)];
  }
  return out;
}

}  // namespace tessel::detail
