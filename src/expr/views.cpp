// Shape checks of concatenate, made while the expression is built (the views' are constexpr, in
// expr/view.hpp).
#include <algorithm>
#include <format>

#include "tessel/core/error.hpp"
#include "tessel/expr/concatenate.hpp"
#include "tessel/expr/view.hpp"

namespace tessel::detail {

void throw_list_too_long(char const* op, std::size_t count) {
  throw Error(std::format("{}: {} entries given, but tensors have at most {} dimensions", op, count, max_rank));
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
