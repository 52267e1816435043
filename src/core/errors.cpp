// The messages of the core's errors. These functions are deliberately not constexpr: when the
// planner runs in a constant expression, reaching one of them is a compile error that names it.
#include <format>
#include <string>

#include "tessel/core/error.hpp"
#include "tessel/core/fixed_vector.hpp"
#include "tessel/core/mesh_axes.hpp"
#include "tessel/core/name.hpp"
#include "tessel/core/shard_layout.hpp"

namespace tessel::detail {

void throw_capacity_exceeded(std::size_t capacity, std::size_t wanted, char const* what) {
  throw Error(std::format("tessel supports at most {} {}, but {} were given", capacity, what, wanted));
}

void throw_scalar_out_of_range(long double value) {
  throw Error(std::format("the C++ integer {:.0f} does not fit in int32, the type a scalar integer takes in an "
                          "expression (JAX refuses such a Python int too); write it as a floating-point constant "
                          "({:.0f}.0)",
                          value, value));
}

void throw_negative_dimension(Shape const& shape, std::size_t dim) {
  throw Error(std::format("shape {} has size {} in dimension {}; dimension sizes must be >= 0", to_string(shape),
                          shape[dim], dim));
}

void throw_too_many_elements(Shape const& shape) {
  throw Error(std::format("shape {} has more elements than tessel can address (at most {}, so that the bytes fit in "
                          "a signed 64-bit size)",
                          to_string(shape), max_elements));
}

void throw_too_many_devices(MeshAxes const& axes) {
  throw Error(std::format("mesh {} would have more devices than tessel can address (at most {})", to_string(axes),
                          max_mesh_devices));
}

void throw_name_too_long(std::string_view name, std::size_t max_length) {
  throw Error(std::format("axis name '{}' has {} characters; tessel allows at most {}", name, name.size(), max_length));
}

void throw_mesh_rank_mismatch(std::size_t num_sizes, std::size_t num_names) {
  throw Error(std::format("mesh shape has {} axes but {} axis names were given", num_sizes, num_names));
}

void throw_empty_axis_name(std::size_t axis) {
  throw Error(std::format("mesh axis {} has an empty name; every mesh axis needs a non-empty name", axis));
}

void throw_duplicate_axis_name(std::string_view name, std::size_t first, std::size_t second) {
  throw Error(std::format("mesh axis name '{}' is used twice (axes {} and {}); axis names must be distinct", name,
                          first, second));
}

void throw_bad_axis_size(std::string_view name, int size) {
  throw Error(std::format("mesh axis '{}' has size {}; axis sizes must be at least 1", name, size));
}

void throw_unknown_axis(Message const& message) { throw Error(std::string(message.view())); }
void throw_axis_used_twice(Message const& message) { throw Error(std::string(message.view())); }
void throw_spec_longer_than_rank(Message const& message) { throw Error(std::string(message.view())); }

}  // namespace tessel::detail
