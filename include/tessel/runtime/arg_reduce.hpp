#pragma once
// argmax / argmin kernels (src/runtime/arg_reduce.cpp).
#include <memory>

#include "tessel/core/fixed_vector.hpp"
#include "tessel/core/shape.hpp"
#include "tessel/runtime/tensor_impl.hpp"

namespace tessel::detail {

// Each device's first best element of its block over `axes` (jnp.argmax's rules: NaN wins, ties go
// to the first index): `index` (int32, global indices along the reduced dimensions, flattened
// row-major) and `value` (the input's dtype), both of the partial sharding given.
void arg_reduce_blocks(TensorImpl const& in, FixedVector<std::uint8_t, max_rank> const& axes, bool max,
                       TensorImpl& index, TensorImpl& value, char const* label);

// Where a device's value is not the group's winner, its index becomes INT32_MAX: then the minimum
// over the group is the first index of the winner.
std::shared_ptr<TensorImpl> mask_losers(TensorImpl const& index, TensorImpl const& value, TensorImpl const& winner,
                                        char const* label);

}  // namespace tessel::detail
