#pragma once
// take's kernel (src/runtime/gather.cpp).
#include <cstddef>

#include "tessel/runtime/tensor_impl.hpp"

namespace tessel::detail {

// Each device's block of `out` (tiled as the plan's partial sharding): the slices of its table
// block the indices name; slices another device holds are -0.0 (0 for int32), so the all-reduce
// that sums the devices' blocks along a split axis gives each slice's bits exactly. An index
// outside the table (after one wrap of negatives) gives NaN (INT32_MIN) from the device holding
// the table's first block, as jnp.take's default fill.
void gather_blocks(TensorImpl const& table, TensorImpl const& indices, std::size_t axis, TensorImpl& out,
                   char const* label);

}  // namespace tessel::detail
