#pragma once
// The backend's region kernels (see backend/kernel_traits.hpp for which folder a build takes):
// backend::launch_elementwise<Unit, Fused> and backend::reduce_many_outputs<Op, C>. Both folders
// combine in reduce_row's order, so a result has the same bits in either shape.
#include "tessel/runtime/backend/kernel_traits.hpp"

#if TESSEL_DEVICE_SHAPES
#include "tessel/runtime/backend/gpu/team_launch.hpp"
#else
#include "tessel/runtime/backend/host/row_launch.hpp"
#endif
