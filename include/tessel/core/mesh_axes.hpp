#pragma once
// The named axes of a device mesh: names and sizes, without the devices. This is all the planner
// needs to know about a mesh, and it is a literal type, so meshes can be compile-time constants.
#include <cstddef>
#include <optional>
#include <string>

#include "tessel/core/fixed_vector.hpp"
#include "tessel/core/name.hpp"

namespace tessel {

inline constexpr std::size_t max_mesh_axes = 8;

namespace detail {
[[noreturn]] void throw_mesh_rank_mismatch(std::size_t num_sizes, std::size_t num_names);
[[noreturn]] void throw_empty_axis_name(std::size_t axis);
[[noreturn]] void throw_duplicate_axis_name(std::string_view name, std::size_t first, std::size_t second);
[[noreturn]] void throw_bad_axis_size(std::string_view name, int size);
}  // namespace detail

class MeshAxes {
 public:
  constexpr MeshAxes() = default;
  constexpr MeshAxes(FixedVector<int, max_mesh_axes> sizes, FixedVector<AxisName, max_mesh_axes> names)
      : sizes_(sizes), names_(names) {
    if (sizes_.size() != names_.size()) detail::throw_mesh_rank_mismatch(sizes_.size(), names_.size());
    for (std::size_t i = 0; i < names_.size(); ++i) {
      if (names_[i].empty()) detail::throw_empty_axis_name(i);
      for (std::size_t j = 0; j < i; ++j)
        if (names_[j] == names_[i]) detail::throw_duplicate_axis_name(names_[i].view(), j, i);
      if (sizes_[i] < 1) detail::throw_bad_axis_size(names_[i].view(), sizes_[i]);
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
      if (names_[i].view() == name) return i;
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
  FixedVector<int, max_mesh_axes> sizes_;
  FixedVector<AxisName, max_mesh_axes> names_;
};

// "('dp': 4, 'mp': 2)"
std::string to_string(MeshAxes const& axes);

}  // namespace tessel
