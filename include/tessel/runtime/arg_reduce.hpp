#pragma once
// What an argmax / argmin's all-reduce over a split axis needs besides the values' all-reduce
// (src/runtime/kernels/argreduce.cpp; the per-device argmax is the kind's kernel).
#include <memory>

#include "tessel/core/fixed_vector.hpp"
#include "tessel/core/shape.hpp"
#include "tessel/runtime/tensor_impl.hpp"

namespace tessel::detail {

// Where a device's value is not the group's winner, its index becomes INT32_MAX: then the minimum
// over the group is the first index of the winner.
std::shared_ptr<TensorImpl> mask_losers(TensorImpl const& index, TensorImpl const& value, TensorImpl const& winner,
                                        char const* label);

}  // namespace tessel::detail
