#include "tessel/expr/checks.hpp"

#include <algorithm>
#include <format>
#include <vector>

#include "tessel/core/error.hpp"

namespace tessel::detail {

void throw_different_meshes(char const* op, Mesh const& a, Mesh const& b) {
  throw Error(std::format("{}: operands live on different meshes, {} and {}; move one with device_put first", op,
                          to_string(a), to_string(b)));
}

void throw_message(Message const& message) { throw Error(std::string(message.view())); }

}  // namespace tessel::detail

#include "tessel/expr/iota.hpp"
#include "tessel/expr/take.hpp"
#include "tessel/expr/normalization.hpp"
#include "tessel/expr/reduce.hpp"

namespace tessel::detail {

std::uint8_t one_axis(char const* op, char const* what, Shape const& shape, int axis) {
  int rank = shape.rank();
  int d = axis < 0 ? axis + rank : axis;
  if (d < 0 || d >= rank)
    throw Error(std::format("{}: {} {} is out of range for shape {} of rank {}", op, what, axis, to_string(shape), rank));
  return static_cast<std::uint8_t>(d);
}

std::uint8_t iota_dimension(Shape const& shape, int dimension) {
  (void)shape.num_elements();  // checks the sizes
  return one_axis("iota", "dimension", shape, dimension);
}

Shape take_shape(Shape const& table, Shape const& indices, int& axis) {
  axis = one_axis("take", "axis", table, axis);
  auto a = static_cast<std::size_t>(axis);
  if (table.size() - 1 + indices.size() > max_rank)
    throw Error(std::format("take: a table of shape {} and indices of shape {} give a result of rank {}, more than {}",
                            to_string(table), to_string(indices), table.size() - 1 + indices.size(), max_rank));
  Shape out;
  for (std::size_t d = 0; d < a; ++d) out.push_back(table[d]);
  for (auto n : indices) out.push_back(n);
  for (std::size_t d = a + 1; d < table.size(); ++d) out.push_back(table[d]);
  return out;
}

std::int64_t reduced_count(char const* op, Axes const& axes, Shape const& shape) {
  std::int64_t n = 1;
  for (auto d : normalize_axes(op, axes, shape)) n *= shape[d];
  return n;
}

}  // namespace tessel::detail
