#pragma once
// The groups a collective over some mesh axes runs in: the mesh positions that differ only in
// their coordinates on those axes. Every collective over "mesh axes (a, b)" is run once per group.
#include <concepts>
#include <cstddef>
#include <initializer_list>
#include <ranges>
#include <span>
#include <vector>

#include "tessel/core/fixed_vector.hpp"
#include "tessel/core/mesh_axes.hpp"
#include "tessel/core/name.hpp"

namespace tessel {

// Axis indices of a mesh, in the order a collective numbers its members.
using MeshAxisList = FixedVector<int, max_mesh_axes>;

// Groups of mesh positions (flat row-major indices into the mesh, as MeshAxes::coords takes them;
// Mesh::device_id(position) is the device) that differ only in their coordinates on `axes`.
//  - Member k of a group is the position whose coordinates on `axes`, read as a mixed-radix number
//    in the given order (first axis most significant), equal k; so member k of every group has the
//    same coordinates on `axes`, and a group has the product of those axes' sizes members.
//  - Groups are listed by their coordinates on the remaining axes, row-major in mesh order (the
//    group holding position 0 first).
// No axes: one group per position, of that position alone. All axes: one group of every position.
// Throws tessel::Error naming the mesh when an axis index is out of range or repeated.
std::vector<std::vector<int>> device_groups(MeshAxes const& mesh, std::span<int const> axes);

inline std::vector<std::vector<int>> device_groups(MeshAxes const& mesh, std::initializer_list<int> axes) {
  return device_groups(mesh, std::span<int const>(axes.begin(), axes.size()));
}

// Any other range of integer axis indices (MeshAxisList, a plan's FixedVector<std::uint8_t, N>, a
// std::vector<std::size_t>).
template <std::ranges::input_range R>
  requires std::integral<std::ranges::range_value_t<R>>
std::vector<std::vector<int>> device_groups(MeshAxes const& mesh, R const& axes) {
  std::vector<int> list;
  for (auto a : axes) list.push_back(static_cast<int>(a));
  return device_groups(mesh, std::span<int const>(list));
}

// The indices of the named axes, in the given order; throws tessel::Error naming the mesh's axes
// for a name it does not have.
MeshAxisList axis_indices(MeshAxes const& mesh, std::span<AxisName const> names);
inline MeshAxisList axis_indices(MeshAxes const& mesh, std::initializer_list<AxisName> names) {
  return axis_indices(mesh, std::span<AxisName const>(names.begin(), names.size()));
}

}  // namespace tessel
