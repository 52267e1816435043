#pragma once
// Sharded results against the same computation unsharded: the unsharded copy of a tensor, and a
// check that two results agree within float32 GEMM rounding (element, both values on failure).
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <vector>

#include "tessel/tessel.hpp"

namespace tessel::test {

// t's values on one device, uncommitted (what the computation unsharded starts from).
inline Tensor<float> whole(Tensor<float> const& t) { return device_put(t.to_host(), t.shape()); }

// |got - want| <= 1e-4 (1 + |want|) element by element.
inline void require_close(std::vector<float> const& got, std::vector<float> const& want) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": " << got[i] << " vs " << want[i]);
    REQUIRE(std::abs(got[i] - want[i]) <= 1e-4f * (1.0f + std::abs(want[i])));
  }
}

}  // namespace tessel::test
