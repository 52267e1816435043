#pragma once
// PartitionSpec (jax.sharding.PartitionSpec, alias P): for each tensor dimension, no mesh axis
// (replicated along that dimension), one mesh axis, or several (major to minor). Dimensions past
// the end of the spec are replicated, as in JAX.
//
//   P("data")              rows over 'data'
//   P("dp", None)          rows over 'dp', columns replicated (None and {} mean the same)
//   P({"dp", "mp"}, None)  rows over 'dp' and 'mp' together (dp major)
//   P()                    fully replicated
#include <cstddef>
#include <initializer_list>
#include <string>

#include "tessel/core/fixed_vector.hpp"
#include "tessel/core/mesh_axes.hpp"
#include "tessel/core/name.hpp"
#include "tessel/core/shape.hpp"

namespace tessel {

// JAX's None inside a PartitionSpec.
struct NoneT {
  explicit constexpr NoneT(int) {}
};
inline constexpr NoneT None{0};

// The mesh axes one tensor dimension is split over.
class DimSpec {
 public:
  constexpr DimSpec() = default;
  constexpr DimSpec(NoneT) {}                                      // NOLINT: implicit by design
  constexpr DimSpec(char const* axis) { axes_.push_back(axis); }   // NOLINT
  constexpr DimSpec(AxisName axis) { axes_.push_back(axis); }      // NOLINT
  DimSpec(std::string const& axis) { axes_.push_back(axis); }      // NOLINT
  // An empty name in the list is skipped: nvcc 13's front end turns an empty `{}` (P({}, "mp"))
  // into a list of one empty name where g++ makes an empty list.
  constexpr DimSpec(std::initializer_list<AxisName> axes) {        // NOLINT
    for (auto const& a : axes)
      if (!a.view().empty()) axes_.push_back(a);
  }

  static constexpr DimSpec of(FixedVector<AxisName, max_mesh_axes> const& axes) {
    DimSpec d;
    d.axes_ = axes;
    return d;
  }

  [[nodiscard]] constexpr auto const& axes() const { return axes_; }
  [[nodiscard]] constexpr bool replicated() const { return axes_.empty(); }
  friend constexpr bool operator==(DimSpec const&, DimSpec const&) = default;

 private:
  FixedVector<AxisName, max_mesh_axes> axes_;
};

class PartitionSpec {
  // Marks an argument the caller did not pass, so P("dp") has one entry and P("dp", None) two.
  struct Absent {};
  struct Arg {
    constexpr Arg(Absent) : present(false) {}   // NOLINT
    template <class T>
      requires std::constructible_from<DimSpec, T>
    constexpr Arg(T&& v) : spec(static_cast<T&&>(v)) {}  // NOLINT
    constexpr Arg(std::initializer_list<AxisName> axes) : spec(axes) {}  // NOLINT
    constexpr Arg(NoneT) {}                                               // NOLINT
    DimSpec spec;
    bool present = true;
  };

 public:
  // Up to max_rank entries, each anything a DimSpec is made from.
  constexpr PartitionSpec(Arg d0 = Absent{}, Arg d1 = Absent{}, Arg d2 = Absent{}, Arg d3 = Absent{},
                          Arg d4 = Absent{}, Arg d5 = Absent{}, Arg d6 = Absent{}, Arg d7 = Absent{}) {
    for (Arg const* a : {&d0, &d1, &d2, &d3, &d4, &d5, &d6, &d7}) {
      if (!a->present) break;
      dims_.push_back(a->spec);
    }
  }
  // P({"dp", "mp"}): one dimension over several axes. Without this overload the braced list would
  // be ambiguous with copying a PartitionSpec made from P("dp", "mp"); string literals convert to
  // char const* with no user-defined conversion, so this one wins.
  constexpr PartitionSpec(std::initializer_list<char const*> axes) {
    FixedVector<AxisName, max_mesh_axes> names;
    for (char const* a : axes) names.push_back(a);
    dims_.push_back(DimSpec::of(names));
  }
  static constexpr PartitionSpec from_dims(FixedVector<DimSpec, max_rank> const& dims) {
    PartitionSpec p;
    p.dims_ = dims;
    return p;
  }

  [[nodiscard]] constexpr std::size_t size() const { return dims_.size(); }
  [[nodiscard]] constexpr DimSpec const& operator[](std::size_t d) const { return dims_[d]; }
  [[nodiscard]] constexpr auto begin() const { return dims_.begin(); }
  [[nodiscard]] constexpr auto end() const { return dims_.end(); }
  // The spec's entry for dimension d of a tensor, replicated past the end of the spec.
  [[nodiscard]] constexpr DimSpec dim(std::size_t d) const { return d < dims_.size() ? dims_[d] : DimSpec{}; }

  friend constexpr bool operator==(PartitionSpec const&, PartitionSpec const&) = default;

 private:
  FixedVector<DimSpec, max_rank> dims_;
};

using P = PartitionSpec;

// "P('dp', None)", the way JAX prints a PartitionSpec.
std::string to_string(PartitionSpec const& spec);

}  // namespace tessel
