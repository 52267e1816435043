#pragma once
// Index arithmetic on the global index space: half-open ranges per dimension, and boxes made of
// them. A shard's "index" in JAX's words (a tuple of slices) is a Box here.
#include <algorithm>
#include <cstdint>
#include <string>

#include "tessel/core/shape.hpp"

namespace tessel {

struct IndexRange {
  std::int64_t start = 0;
  std::int64_t stop = 0;

  [[nodiscard]] constexpr std::int64_t size() const { return stop > start ? stop - start : 0; }
  friend constexpr bool operator==(IndexRange const&, IndexRange const&) = default;
};

class Box : public FixedVector<IndexRange, max_rank> {
 public:
  using FixedVector::FixedVector;

  static constexpr Box whole(Shape const& shape) {
    Box b;
    for (auto d : shape) b.push_back({0, d});
    return b;
  }
  [[nodiscard]] constexpr Shape extent() const {
    Shape s;
    for (auto const& r : *this) s.push_back(r.size());
    return s;
  }
  [[nodiscard]] constexpr std::int64_t num_elements() const { return extent().num_elements(); }
  [[nodiscard]] constexpr bool empty() const {
    return std::any_of(begin(), end(), [](IndexRange const& r) { return r.size() == 0; });
  }
};

// The common part of two boxes of the same rank (empty when they do not overlap).
constexpr Box intersect(Box const& a, Box const& b) {
  Box out;
  for (std::size_t d = 0; d < a.size(); ++d)
    out.push_back({std::max(a[d].start, b[d].start), std::min(a[d].stop, b[d].stop)});
  return out;
}

// "[0:16, 0:4]", the way JAX prints a shard's index.
std::string to_string(Box const& box);

}  // namespace tessel
