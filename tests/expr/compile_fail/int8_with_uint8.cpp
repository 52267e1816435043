// Must not compile: int8 with uint8 promotes to int16 in JAX, a dtype tessel does not store; the
// error says so and what to do, naming both dtypes.
#include <cstdint>

#include "tessel/tessel.hpp"

auto mixed(tessel::Tensor<std::int8_t> const& a, tessel::Tensor<std::uint8_t> const& b) { return a + b; }
