#pragma once
// The kernel shapes and memory hints of this build's backend, from its folder: backend/host/ for
// CPU backends; backend/gpu/ for GPU backends, and for CPU builds compiled with
// TESSEL_DEVICE_SHAPED_KERNELS, which run the device shapes on a CPU so that CI tests their logic.
// Generic runtime code reads the capabilities these headers define (`backend::combine_tile`,
// `backend::row_memo_slots`, `backend::reduce_in_vectors`, ...) and never which backend it runs
// on: this is the one header that asks, and TESSEL_DEVICE_SHAPES says what it chose to the other
// selectors (backend/launch_shapes.hpp). Copies are shaped by the execution space's type instead
// (backend/copy_shape.hpp), so that one build copies in both shapes.
#include <Kokkos_Core.hpp>

// Kernels compiled for a GPU, or for a host CPU.
#if defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP) || defined(KOKKOS_ENABLE_SYCL)
#define TESSEL_GPU_KERNELS 1
#else
#define TESSEL_GPU_KERNELS 0
#endif

#if TESSEL_GPU_KERNELS || defined(TESSEL_DEVICE_SHAPED_KERNELS)
#define TESSEL_DEVICE_SHAPES 1
#else
#define TESSEL_DEVICE_SHAPES 0
#endif

#if TESSEL_DEVICE_SHAPES
#include "tessel/runtime/backend/gpu/kernel_traits.hpp"
#else
#include "tessel/runtime/backend/host/kernel_traits.hpp"
#endif

// A row reduction's lanes are the host CPU's native vectors wherever kernels run on a host CPU:
// host backends, and CPU builds of the device shapes, which otherwise leave XLA's max scalar (5x
// slower softmax). The lanes and their order are the same either way, so the bits are.
#if !TESSEL_GPU_KERNELS
#include "tessel/runtime/backend/host/lane_vectors.hpp"
#else
#include "tessel/runtime/backend/gpu/scalar_lanes.hpp"
#endif
