#pragma once
// Every device's block of a dot_general, by BLAS GEMM (see src/runtime/local_dot.cpp).
#include "tessel/expr/dot.hpp"
#include "tessel/runtime/tensor_impl.hpp"

namespace tessel::detail {

// out's shards (tiled as the plan's partial sharding) = lhs block x rhs block on each device;
// lhs, rhs and out are on the same mesh, tiled consistently with the dimension numbers.
void local_dot(TensorImpl const& lhs, TensorImpl const& rhs, DotDims const& dims, TensorImpl& out);

}  // namespace tessel::detail
