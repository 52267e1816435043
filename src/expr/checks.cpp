#include "tessel/expr/checks.hpp"

#include <algorithm>
#include <format>
#include <limits>
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
#include "tessel/expr/top_k.hpp"
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

Shape top_k_shape(Shape const& operand, std::int64_t k, int& axis) {
  if (operand.rank() == 0) throw Error("top_k: the operand is 0-d; top_k selects along an axis of rank >= 1");
  axis = one_axis("top_k", "axis", operand, axis);
  auto a = static_cast<std::size_t>(axis);
  if (k < 0 || k > operand[a])
    throw Error(std::format("top_k: k = {} is out of range for axis {} of size {} of the operand {}; it needs 0 <= k <= {}",
                            k, axis, operand[a], to_string(operand), operand[a]));
  if (k > std::numeric_limits<std::int32_t>::max())
    throw Error(std::format("top_k: k = {} does not fit the int32 indices", k));
  Shape out = operand;
  out[a] = k;
  return out;
}

std::int64_t reduced_count(char const* op, Axes const& axes, Shape const& shape) {
  std::int64_t n = 1;
  for (auto d : normalize_axes(op, axes, shape)) n *= shape[d];
  return n;
}

}  // namespace tessel::detail

#include "tessel/expr/dynamic_slice.hpp"

namespace tessel::detail {

void check_start_shapes(char const* op, Shape const* const* starts, std::size_t count) {
  for (std::size_t k = 0; k < count; ++k)
    if (!starts[k]->empty())
      throw Error(std::format("{}: start index {} has shape {}; each start index is a scalar (a C++ integer or a 0-d "
                              "integer tensor)",
                              op, k, to_string(*starts[k])));
}

FixedVector<std::uint8_t, max_rank> all_dims(char const* op, Shape const& operand, std::size_t starts) {
  if (starts != operand.size())
    throw Error(std::format("{}: the operand {} has rank {}, but {} start indices were given (one per dimension)", op,
                            to_string(operand), operand.size(), starts));
  FixedVector<std::uint8_t, max_rank> dims;
  for (std::size_t d = 0; d < operand.size(); ++d) dims.push_back(static_cast<std::uint8_t>(d));
  return dims;
}

FixedVector<std::uint8_t, max_rank> one_dim(char const* op, Shape const& operand, int axis) {
  FixedVector<std::uint8_t, max_rank> dims;
  dims.push_back(one_axis(op, "axis", operand, axis));
  return dims;
}

Shape dynamic_slice_shape(Shape const& operand, Shape const& sizes) {
  if (sizes.size() != operand.size())
    throw Error(std::format("dynamic_slice: the operand {} has rank {}, but {} slice sizes were given", to_string(operand),
                            operand.size(), sizes.size()));
  for (std::size_t d = 0; d < operand.size(); ++d)
    if (sizes[d] < 0 || sizes[d] > operand[d])
      throw Error(std::format("dynamic_slice: dimension {} of the operand {} has size {}; the slice size {} needs 0 <= "
                              "size <= {}",
                              d, to_string(operand), operand[d], sizes[d], operand[d]));
  return sizes;
}

void check_update_shape(Shape const& operand, Shape const& update, FixedVector<std::uint8_t, max_rank> const& dims) {
  if (update.size() != operand.size())
    throw Error(std::format("dynamic_update_slice: the update {} has rank {}, the operand {} rank {}; they must match",
                            to_string(update), update.size(), to_string(operand), operand.size()));
  for (std::size_t d = 0; d < operand.size(); ++d) {
    bool indexed = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (update[d] > operand[d])
      throw Error(std::format("dynamic_update_slice: dimension {} of the update {} has size {}, larger than the "
                              "operand {}'s {}",
                              d, to_string(update), update[d], to_string(operand), operand[d]));
    if (!indexed && update[d] != operand[d])
      throw Error(std::format("dynamic_update_slice_in_dim: dimension {} of the update {} has size {}; only the axis "
                              "given may be smaller than the operand {}'s",
                              d, to_string(update), update[d], to_string(operand)));
  }
}

}  // namespace tessel::detail
