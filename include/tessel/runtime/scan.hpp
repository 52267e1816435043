#pragma once
// A scan's carry between blocks when its axis is split over devices (src/runtime/kernels/scan.cpp;
// the scan of each block is the scan kind's kernel).
#include <cstddef>
#include <memory>

#include "tessel/core/reduce_op.hpp"
#include "tessel/runtime/tensor_impl.hpp"

namespace tessel::detail {

// Combines into every block of `t` the last values along `axis` of the block before it, block by
// block in the axis's order, among the devices that hold the same rest of the tensor: afterwards
// each block holds the scan of everything up to it.
void scan_carry(TensorImpl& t, std::size_t axis, ReduceOp op, char const* label);

}  // namespace tessel::detail
