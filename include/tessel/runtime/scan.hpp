#pragma once
// The kernels of a scan (jnp.cumsum; src/runtime/scan.cpp): each device's block scanned along an
// axis, and the carry between blocks when the axis is split over devices.
#include <cstddef>
#include <memory>

#include "tessel/core/reduce_op.hpp"
#include "tessel/runtime/tensor_impl.hpp"

namespace tessel::detail {

// A new tensor, sharded like `in`, whose every block is the running combination of in's block
// along `axis`, left to right from the identity (XLA:CPU's order for rows of up to 16).
std::shared_ptr<TensorImpl> local_scan(TensorImpl const& in, std::size_t axis, ReduceOp op, char const* label);

// Combines into every block of `t` the last values along `axis` of the block before it, block by
// block in the axis's order, among the devices that hold the same rest of the tensor: afterwards
// each block holds the scan of everything up to it.
void scan_carry(TensorImpl& t, std::size_t axis, ReduceOp op, char const* label);

}  // namespace tessel::detail
