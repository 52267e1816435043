#pragma once
// A mesh: named axes laid over a grid of devices (jax.sharding.Mesh).
#include <initializer_list>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "tessel/core/mesh_axes.hpp"

namespace tessel {

namespace detail {
// The device list of single_device_sharding(0), the sharding of values nothing places (iotas):
// a constant, so that plans made at compile time can name it (Mesh's device lists are interned).
inline constexpr int device_zero_list[1] = {0};
// The one stored copy of a device list (src/core/mesh.cpp).
int const* intern_device_list(std::vector<int> ids);
}  // namespace detail

class Mesh {
 public:
  // Lays `device_ids` (row-major, last axis fastest) over the axes. The ids must be distinct and
  // their count must equal the product of the axis sizes.
  Mesh(MeshAxes axes, std::vector<int> device_ids);
  // An abstract mesh (jax.sharding.AbstractMesh): the axes without devices. A literal value, so
  // plans over it can be made at compile time (static_jit); which devices run them is bound when
  // the plan runs. Devices are taken to be 0..n-1 in order wherever a plan would ask (a copy
  // between meshes), and the binding checks that the plan still holds for the real ones.
  constexpr explicit Mesh(MeshAxes axes) : axes_(axes) {}

  [[nodiscard]] constexpr MeshAxes const& axes() const { return axes_; }
  // The devices, in mesh order (empty for an abstract mesh).
  [[nodiscard]] std::span<int const> device_ids() const {
    return is_abstract() ? std::span<int const>{} : std::span<int const>(ids_, static_cast<std::size_t>(axes_.num_devices()));
  }
  [[nodiscard]] constexpr int num_devices() const { return axes_.num_devices(); }
  [[nodiscard]] constexpr int device_id(int flat) const { return kind_ == Kind::abstract ? flat : ids_[flat]; }
  [[nodiscard]] constexpr std::size_t num_axes() const { return axes_.num_axes(); }
  [[nodiscard]] constexpr bool is_abstract() const { return kind_ == Kind::abstract; }
  // Size of a named axis; throws naming the mesh's axes when there is no such axis.
  [[nodiscard]] int axis_size(std::string_view name) const;
  // The mesh of one device: device 0's is a constant (the sharding of unplaced values).
  static constexpr Mesh device_zero() { return Mesh(MeshAxes({1}, {"device"}), detail::device_zero_list, Kind::device_zero); }
  // The same axes over the devices of `devices` (binding an abstract mesh).
  [[nodiscard]] Mesh with_devices(Mesh const& devices) const;

  // Device lists are interned (one copy per distinct list, kept for the program's life), so equal
  // lists are the same pointer: comparing and copying meshes is comparing and copying two words
  // besides the axes, and a mesh is a literal type.
  // In a constant expression only abstract meshes and device 0's exist, and they are told apart by
  // their kind: the compiler may not compare a global's address (device 0's list) with another
  // address when sanitizers instrument the build.
  friend constexpr bool operator==(Mesh const& a, Mesh const& b) {
    if (std::is_constant_evaluated()) return a.kind_ == b.kind_ && a.axes_ == b.axes_;
    return a.ids_ == b.ids_ && a.axes_ == b.axes_;
  }

 private:
  enum class Kind : std::uint8_t { abstract, device_zero, devices };
  constexpr Mesh(MeshAxes axes, int const* interned, Kind kind) : axes_(axes), ids_(interned), kind_(kind) {}
  MeshAxes axes_;
  int const* ids_ = nullptr;  // interned (src/core/mesh.cpp); none for an abstract mesh
  Kind kind_ = Kind::abstract;
};

// jax.make_mesh: a mesh over the process's devices (device_count()), which must number exactly the
// product of `shape`; or over the given devices.
Mesh make_mesh(std::initializer_list<int> shape, std::initializer_list<AxisName> axis_names);
Mesh make_mesh(std::initializer_list<int> shape, std::initializer_list<AxisName> axis_names,
               std::vector<int> device_ids);
Mesh make_mesh(MeshAxes axes, std::vector<int> device_ids);
Mesh make_mesh(MeshAxes axes);

namespace detail {
bool same_device_lists(Mesh const& a, Mesh const& b);  // sorted and compared (src/core/mesh.cpp)
}

// Whether two meshes lay out the same set of devices (in any shape or order). Abstract meshes are
// laid over devices 0..n-1.
constexpr bool same_devices(Mesh const& a, Mesh const& b) {
  if (a == b) return true;
  if (a.num_devices() != b.num_devices()) return false;
  if (!std::is_constant_evaluated()) return detail::same_device_lists(a, b);
  for (int p = 0; p < a.num_devices(); ++p) {
    bool found = false;
    for (int q = 0; q < b.num_devices() && !found; ++q) found = a.device_id(p) == b.device_id(q);
    if (!found) return false;
  }
  return true;
}

// "Mesh('dp': 4, 'mp': 2; devices [0 1 2 3 4 5 6 7])"
std::string to_string(Mesh const& mesh);

}  // namespace tessel
