#pragma once
// Global tensor shapes. Rank is a run-time value bounded by max_rank.
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>

#include "tessel/core/fixed_vector.hpp"

namespace tessel {

inline constexpr std::size_t max_rank = 8;
// Elements a tensor may have: its bytes (8 per element at most) must fit in a signed 64-bit size.
inline constexpr std::int64_t max_elements = std::numeric_limits<std::int64_t>::max() / 8;

struct RankCapacity {
  static constexpr char const* what = "dimensions (tensor rank)";
};

class Shape;
namespace detail {
[[noreturn]] void throw_negative_dimension(Shape const& shape, std::size_t dim);
[[noreturn]] void throw_too_many_elements(Shape const& shape);
}  // namespace detail

class Shape : public FixedVector<std::int64_t, max_rank, RankCapacity> {
 public:
  using FixedVector::FixedVector;
  constexpr Shape(std::initializer_list<std::int64_t> dims) : FixedVector(dims) {}

  [[nodiscard]] constexpr int rank() const { return static_cast<int>(size()); }
  // The element count; every size tessel computes goes through here, so a negative dimension or a
  // count past max_elements is an error naming the shape, never a wrapped number.
  [[nodiscard]] constexpr std::int64_t num_elements() const {
    std::int64_t n = 1;
    bool zero = false;
    for (std::size_t d = 0; d < size(); ++d) {
      std::int64_t dim = (*this)[d];
      if (dim < 0) detail::throw_negative_dimension(*this, d);
      zero = zero || dim == 0;
      // Past the limit the count is only kept saturated: a later zero dimension still makes it 0.
      if (n > max_elements / (dim == 0 ? 1 : dim)) n = max_elements + 1;
      else n *= dim == 0 ? 1 : dim;
    }
    if (zero) return 0;
    if (n > max_elements) detail::throw_too_many_elements(*this);
    return n;
  }
};

// The row-major strides (in elements) of a buffer of this shape, into stride[0 .. rank): the last
// dimension's is 1. Every dense block tessel stores is laid out so.
constexpr void row_major_strides(Shape const& shape, std::int64_t* stride) {
  std::int64_t st = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    stride[d] = st;
    st *= shape[d];
  }
}

// "(128, 4)", the way NumPy prints shapes.
std::string to_string(Shape const& shape);

}  // namespace tessel
