#pragma once
// A mesh: named axes laid over a grid of devices (jax.sharding.Mesh).
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tessel/core/mesh_axes.hpp"

namespace tessel {

class Mesh {
 public:
  // Lays `device_ids` (row-major, last axis fastest) over the axes. The ids must be distinct and
  // their count must equal the product of the axis sizes.
  Mesh(MeshAxes axes, std::vector<int> device_ids);

  [[nodiscard]] MeshAxes const& axes() const { return axes_; }
  [[nodiscard]] std::span<int const> device_ids() const { return *device_ids_; }
  [[nodiscard]] int num_devices() const { return static_cast<int>(device_ids_->size()); }
  [[nodiscard]] int device_id(int flat) const { return (*device_ids_)[static_cast<std::size_t>(flat)]; }
  [[nodiscard]] std::size_t num_axes() const { return axes_.num_axes(); }
  // Size of a named axis; throws naming the mesh's axes when there is no such axis.
  [[nodiscard]] int axis_size(std::string_view name) const;

  friend bool operator==(Mesh const& a, Mesh const& b) {
    return a.axes_ == b.axes_ && (a.device_ids_ == b.device_ids_ || *a.device_ids_ == *b.device_ids_);
  }

 private:
  MeshAxes axes_;
  std::shared_ptr<std::vector<int> const> device_ids_;  // shared: meshes are copied freely
};

// jax.make_mesh: a mesh over the process's devices (device_count()), which must number exactly the
// product of `shape`; or over the given devices.
Mesh make_mesh(std::initializer_list<int> shape, std::initializer_list<AxisName> axis_names);
Mesh make_mesh(std::initializer_list<int> shape, std::initializer_list<AxisName> axis_names,
               std::vector<int> device_ids);
Mesh make_mesh(MeshAxes axes, std::vector<int> device_ids);
Mesh make_mesh(MeshAxes axes);

// Whether two meshes lay out the same set of devices (in any shape or order).
bool same_devices(Mesh const& a, Mesh const& b);

// "Mesh('dp': 4, 'mp': 2; devices [0 1 2 3 4 5 6 7])"
std::string to_string(Mesh const& mesh);

}  // namespace tessel
