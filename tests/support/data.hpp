#pragma once
// Host test data whose every element is distinct, so a misplaced element cannot go unnoticed; and
// values of scattered magnitudes, whose sums depend on the order they are added in.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "tessel/tessel.hpp"

namespace tessel::test {

template <class T>
std::vector<T> iota_data(Shape const& shape, T offset = T(0)) {
  std::vector<T> v(static_cast<std::size_t>(shape.num_elements()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<T>(i) * T(3) + offset;
  return v;
}

// n normal values, each scaled by 2^e for e uniform in [-max_exponent, max_exponent], times
// `scale`: a sum of them rounds differently in each order (a reduction-order test's data).
template <class T>
std::vector<T> scattered_values(std::int64_t n, unsigned seed, int max_exponent, double scale = 1.0) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> exponent(-max_exponent, max_exponent);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<T>(std::ldexp(normal(gen), exponent(gen)) * scale);
  return v;
}

template <class T>
bool bitwise_equal(std::vector<T> const& a, std::vector<T> const& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// The element of row-major `whole` (global shape `shape`) at the i-th position of `box`.
template <class T>
T element_at(std::vector<T> const& whole, Shape const& shape, Box const& box, std::int64_t i) {
  std::int64_t flat = 0, stride = 1;
  for (std::size_t d = box.size(); d-- > 0;) {
    flat += (box[d].start + i % box[d].size()) * stride;
    i /= box[d].size();
    stride *= shape[d];
  }
  return whole[static_cast<std::size_t>(flat)];
}

// Checks every shard's data against the whole tensor, on the host.
template <class T>
bool shards_match(Tensor<T> const& x, std::vector<T> const& whole) {
  for (auto const& s : x.addressable_shards()) {
    auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.data);
    for (std::int64_t i = 0; i < s.shape.num_elements(); ++i)
      if (host(static_cast<std::size_t>(i)) != element_at(whole, x.shape(), s.index, i)) return false;
  }
  return true;
}

}  // namespace tessel::test
