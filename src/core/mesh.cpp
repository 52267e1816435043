// Meshes: the checks of a device list, and make_mesh over the process's devices (their count is
// core/device_count.hpp's; the devices themselves are the runtime's).
#include "tessel/core/mesh.hpp"

#include <algorithm>
#include <format>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "tessel/core/device_count.hpp"
#include "tessel/core/error.hpp"
#include "tessel/core/named_sharding.hpp"

namespace tessel {

namespace detail {
namespace {
// One copy of each device list, for the program's life (a handful of meshes in practice).
std::mutex device_lists_mutex;
std::map<std::vector<int>, std::unique_ptr<int[]>>& device_lists() {
  static std::map<std::vector<int>, std::unique_ptr<int[]>> lists;
  return lists;
}
}  // namespace

int const* intern_device_list(std::vector<int> ids) {
  if (ids.size() == 1 && ids[0] == 0) return device_zero_list;
  std::lock_guard lock(device_lists_mutex);
  auto& lists = device_lists();
  auto it = lists.find(ids);
  if (it == lists.end()) {
    auto copy = std::make_unique<int[]>(ids.size());
    std::copy(ids.begin(), ids.end(), copy.get());
    it = lists.emplace(std::move(ids), std::move(copy)).first;
  }
  return it->second.get();
}
}  // namespace detail

Mesh::Mesh(MeshAxes axes, std::vector<int> device_ids) : axes_(std::move(axes)) {
  if (static_cast<int>(device_ids.size()) != axes_.num_devices())
    throw Error(std::format("mesh {} needs {} devices but {} device ids were given", to_string(axes_),
                            axes_.num_devices(), device_ids.size()));
  int n = device_count();
  std::vector<bool> seen(static_cast<std::size_t>(n), false);
  for (int id : device_ids) {
    if (id < 0 || id >= n)
      throw Error(std::format("mesh {}: device {} does not exist: this process has {} devices (0..{})",
                              to_string(axes_), id, n, n - 1));
    if (seen[static_cast<std::size_t>(id)])
      throw Error(std::format("mesh {}: device {} appears twice in the device list", to_string(axes_), id));
    seen[static_cast<std::size_t>(id)] = true;
  }
  ids_ = detail::intern_device_list(std::move(device_ids));
  kind_ = ids_ == detail::device_zero_list ? Kind::device_zero : Kind::devices;
}

Mesh Mesh::with_devices(Mesh const& devices) const {
  if (devices.num_devices() != num_devices())
    throw Error(std::format("mesh {} cannot be laid over the {} devices of {}", to_string(axes_), devices.num_devices(),
                            to_string(devices)));
  return Mesh(axes_, devices.ids_, devices.kind_);
}

bool detail::same_device_lists(Mesh const& a, Mesh const& b) {
  // By device_id, so an abstract mesh counts as devices 0..n-1, as same_devices' constant branch has it.
  auto sorted = [](Mesh const& m) {
    std::vector<int> v(static_cast<std::size_t>(m.num_devices()));
    for (int k = 0; k < m.num_devices(); ++k) v[static_cast<std::size_t>(k)] = m.device_id(k);
    std::sort(v.begin(), v.end());
    return v;
  };
  return a == b || sorted(a) == sorted(b);
}

int Mesh::axis_size(std::string_view name) const {
  auto a = axes_.find(name);
  if (!a) throw Error(std::format("mesh {} has no axis '{}'", to_string(axes_), name));
  return axes_.size(*a);
}

Mesh make_mesh(MeshAxes axes) {
  int n = device_count();
  if (axes.num_devices() != n)
    throw Error(std::format("make_mesh: mesh {} needs {} devices but this process has {} (set TESSEL_NUM_DEVICES "
                            "or call tessel::set_device_count, or pass the device ids to use)",
                            to_string(axes), axes.num_devices(), n));
  std::vector<int> ids(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) ids[static_cast<std::size_t>(i)] = i;
  return Mesh(std::move(axes), std::move(ids));
}

Mesh make_mesh(MeshAxes axes, std::vector<int> device_ids) { return Mesh(std::move(axes), std::move(device_ids)); }

namespace {
MeshAxes axes_from(std::initializer_list<int> shape, std::initializer_list<AxisName> names) {
  MeshSizes sizes;
  for (int s : shape) sizes.push_back(s);
  MeshNames ns;
  for (auto const& n : names) ns.push_back(n);
  return MeshAxes(sizes, ns);
}
}  // namespace

Mesh make_mesh(std::initializer_list<int> shape, std::initializer_list<AxisName> axis_names) {
  return make_mesh(axes_from(shape, axis_names));
}
Mesh make_mesh(std::initializer_list<int> shape, std::initializer_list<AxisName> axis_names,
               std::vector<int> device_ids) {
  return Mesh(axes_from(shape, axis_names), std::move(device_ids));
}

namespace detail {

NamedSharding single_device_sharding(int device_id) {
  if (device_id == 0) return device_zero_sharding();
  return NamedSharding(Mesh(MeshAxes({1}, {"device"}), {device_id}), P());
}

}  // namespace detail
}  // namespace tessel
