#pragma once
// Global tensor shapes. Rank is a run-time value bounded by max_rank.
#include <cstdint>
#include <initializer_list>
#include <string>

#include "tessel/core/fixed_vector.hpp"

namespace tessel {

inline constexpr std::size_t max_rank = 8;

class Shape : public FixedVector<std::int64_t, max_rank> {
 public:
  using FixedVector::FixedVector;
  constexpr Shape(std::initializer_list<std::int64_t> dims) : FixedVector(dims) {}

  [[nodiscard]] constexpr int rank() const { return static_cast<int>(size()); }
  [[nodiscard]] constexpr std::int64_t num_elements() const {
    std::int64_t n = 1;
    for (auto d : *this) n *= d;
    return n;
  }
};

// "(128, 4)", the way NumPy prints shapes.
std::string to_string(Shape const& shape);

}  // namespace tessel
