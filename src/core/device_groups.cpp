#include "tessel/core/device_groups.hpp"

#include <format>

#include "tessel/core/error.hpp"

namespace tessel {

std::vector<std::vector<int>> device_groups(MeshAxes const& mesh, std::span<int const> axes) {
  std::size_t rank = mesh.num_axes();
  std::vector<bool> in_group(rank, false);
  for (std::size_t i = 0; i < axes.size(); ++i) {
    int a = axes[i];
    if (a < 0 || static_cast<std::size_t>(a) >= rank)
      throw Error(std::format("device_groups: mesh {} has {} axes (0..{}), there is no axis {}", to_string(mesh), rank,
                              static_cast<int>(rank) - 1, a));
    if (in_group[static_cast<std::size_t>(a)])
      throw Error(std::format("device_groups: axis {} ('{}') of mesh {} is given twice", a,
                              mesh.name(static_cast<std::size_t>(a)).view(), to_string(mesh)));
    in_group[static_cast<std::size_t>(a)] = true;
  }
  int group_size = 1;
  for (int a : axes) group_size *= mesh.size(static_cast<std::size_t>(a));
  int n = mesh.num_devices();
  std::vector<std::vector<int>> groups(static_cast<std::size_t>(n / group_size),
                                       std::vector<int>(static_cast<std::size_t>(group_size)));
  for (int pos = 0; pos < n; ++pos) {
    auto c = mesh.coords(pos);
    int member = 0;  // coordinates on `axes`, mixed radix, first axis most significant
    for (int a : axes) member = member * mesh.size(static_cast<std::size_t>(a)) + c[static_cast<std::size_t>(a)];
    int group = 0;  // coordinates on the other axes, row-major in mesh order
    for (std::size_t a = 0; a < rank; ++a)
      if (!in_group[a]) group = group * mesh.size(a) + c[a];
    groups[static_cast<std::size_t>(group)][static_cast<std::size_t>(member)] = pos;
  }
  return groups;
}

MeshAxisList axis_indices(MeshAxes const& mesh, std::span<AxisName const> names) {
  MeshAxisList out;
  for (auto const& name : names) {
    auto a = mesh.find(name.view());
    if (!a) throw Error(std::format("mesh {} has no axis '{}'", to_string(mesh), name.view()));
    out.push_back(static_cast<int>(*a));
  }
  return out;
}

}  // namespace tessel
