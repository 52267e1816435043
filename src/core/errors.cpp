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

void throw_unknown_axis(PartitionSpec const& spec, std::string_view axis, MeshAxes const& mesh) {
  throw Error(std::format("{} names mesh axis '{}', which is not in the mesh {}", to_string(spec), axis,
                          to_string(mesh)));
}

void throw_axis_used_twice(PartitionSpec const& spec, std::string_view axis, std::size_t first_dim,
                           std::size_t second_dim) {
  throw Error(first_dim == second_dim
                  ? std::format("{} uses mesh axis '{}' twice in dimension {}; a mesh axis may shard at most "
                                "one dimension, once",
                                to_string(spec), axis, first_dim)
                  : std::format("{} uses mesh axis '{}' for both dimension {} and dimension {}; a mesh axis may "
                                "shard at most one dimension",
                                to_string(spec), axis, first_dim, second_dim));
}

void throw_spec_longer_than_rank(PartitionSpec const& spec, Shape const& shape) {
  throw Error(std::format("{} has {} entries but the tensor of shape {} has rank {}", to_string(spec), spec.size(),
                          to_string(shape), shape.size()));
}

void throw_indivisible(PartitionSpec const& spec, Shape const& shape, std::size_t dim, MeshAxes const& mesh,
                       std::int64_t product) {
  std::string axes;
  for (auto const& a : spec[dim].axes()) axes += std::format("{}'{}' ({})", axes.empty() ? "" : " x ", a.view(),
                                                             mesh.size(*mesh.find(a.view())));
  throw Error(std::format("{}: dimension {} of shape {} has size {}, which is not divisible by mesh axes {} of "
                          "total size {}; tessel does not pad uneven shards",
                          to_string(spec), dim, to_string(shape), shape[dim], axes, product));
}

}  // namespace tessel::detail
