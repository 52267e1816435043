#pragma once
// A result's bits as one number (FNV-1a over its bytes), for tests that compare results across
// runs: processes (test_multiprocess), thread counts (test_reduce_order).
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessel::test {

template <class T>
std::uint64_t bits_digest(std::vector<T> const& v) {
  std::uint64_t h = 1469598103934665603ull;
  auto const* p = reinterpret_cast<unsigned char const*>(v.data());
  for (std::size_t k = 0; k < v.size() * sizeof(T); ++k) h = (h ^ p[k]) * 1099511628211ull;
  return h;
}

}  // namespace tessel::test
