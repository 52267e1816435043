#pragma once
// The backend's region kernels (see backend/kernel_traits.hpp for which folder a build takes):
// backend::launch_elementwise<Unit, Fused> and backend::reduce_many_outputs<Op, C>. Both folders
// combine in reduce_row's order, so a result has the same bits in either shape.
#include "tessel/runtime/backend/kernel_traits.hpp"

#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL) || \
    defined(TESSEL_DEVICE_SHAPED_KERNELS)
#include "tessel/runtime/backend/device/region_launch.hpp"
#else
#include "tessel/runtime/backend/host/region_launch.hpp"
#endif
