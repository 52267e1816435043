#pragma once
// The named axes of a device mesh: names and sizes, without the devices. This is all the planner
// needs to know about a mesh, and it is a literal type, so meshes can be compile-time constants.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "tessel/core/fixed_vector.hpp"
#include "tessel/core/name.hpp"

namespace tessel {

inline constexpr std::size_t max_mesh_axes = 8;
// Devices a mesh may have (the device count is an int everywhere).
inline constexpr int max_mesh_devices = 1 << 24;

struct MeshAxesCapacity {
  static constexpr char const* what = "mesh axes";
};
using MeshSizes = FixedVector<int, max_mesh_axes, MeshAxesCapacity>;
using MeshNames = FixedVector<AxisName, max_mesh_axes, MeshAxesCapacity>;

class MeshAxes;

namespace detail {
[[noreturn]] void throw_mesh_rank_mismatch(std::size_t num_sizes, std::size_t num_names);
[[noreturn]] void throw_empty_axis_name(std::size_t axis);
[[noreturn]] void throw_duplicate_axis_name(std::string_view name, std::size_t first, std::size_t second);
[[noreturn]] void throw_bad_axis_size(std::string_view name, int size);
[[noreturn]] void throw_too_many_devices(MeshAxes const& axes);
}  // namespace detail

class MeshAxes {
 public:
  constexpr MeshAxes() = default;
  constexpr MeshAxes(MeshSizes sizes, MeshNames names)
      : sizes_(sizes), names_(names) {
    if (sizes_.size() != names_.size()) detail::throw_mesh_rank_mismatch(sizes_.size(), names_.size());
    for (std::size_t i = 0; i < names_.size(); ++i) {
      if (names_[i].empty()) detail::throw_empty_axis_name(i);
      for (std::size_t j = 0; j < i; ++j)
        if (names_[j] == names_[i]) detail::throw_duplicate_axis_name(names_[i].view(), j, i);
      if (sizes_[i] < 1) detail::throw_bad_axis_size(names_[i].view(), sizes_[i]);
    }
    std::int64_t n = 1;
    for (int s : sizes_) {
      n *= s;  // <= 2^24 * 2^31 before the check below stops it: no overflow
      if (n > max_mesh_devices) detail::throw_too_many_devices(*this);
    }
  }

  [[nodiscard]] constexpr std::size_t num_axes() const { return sizes_.size(); }
  [[nodiscard]] constexpr int size(std::size_t axis) const { return sizes_[axis]; }
  [[nodiscard]] constexpr AxisName const& name(std::size_t axis) const { return names_[axis]; }
  [[nodiscard]] constexpr auto const& sizes() const { return sizes_; }
  [[nodiscard]] constexpr auto const& names() const { return names_; }
  [[nodiscard]] constexpr int num_devices() const {
    int n = 1;
    for (int s : sizes_) n *= s;
    return n;
  }
  [[nodiscard]] constexpr std::optional<std::size_t> find(std::string_view name) const {
    for (std::size_t i = 0; i < names_.size(); ++i)
      if (names_[i].equals(name)) return i;
    return std::nullopt;
  }
  [[nodiscard]] constexpr std::optional<std::size_t> find(AxisName const& name) const {
    for (std::size_t i = 0; i < names_.size(); ++i)
      if (names_[i] == name) return i;
    return std::nullopt;
  }

  // Row-major coordinates of the device at flat position `flat` in the mesh (last axis fastest,
  // as in numpy's reshape of the device list).
  [[nodiscard]] constexpr FixedVector<int, max_mesh_axes> coords(int flat) const {
    FixedVector<int, max_mesh_axes> c(num_axes(), 0);
    for (std::size_t a = num_axes(); a-- > 0;) {
      c[a] = flat % sizes_[a];
      flat /= sizes_[a];
    }
    return c;
  }

  friend constexpr bool operator==(MeshAxes const&, MeshAxes const&) = default;

 private:
  MeshSizes sizes_;
  MeshNames names_;
};

// "('dp': 4, 'mp': 2)"
std::string to_string(MeshAxes const& axes);
// "'dp', 'mp'": the axes whose bits are set in `mask` (bit a for axis a), for messages.
std::string varying_text(MeshAxes const& axes, std::uint32_t mask);

}  // namespace tessel
