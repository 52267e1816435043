#pragma once
// The copy shape of a kernel, chosen by the type of the execution space it runs on (as Kokkos
// chooses ParallelFor<..., Kokkos::OpenMP> or <..., Kokkos::Cuda>): a device space's kernels copy
// one element per work item (backend/gpu/copy_shape.hpp), a host space's a chunk of a run, with
// non-temporal stores for large outputs (backend/host/copy_shape.hpp). So one build holds both: a
// GPU build's copies into host buffers (packing before a transfer) take the host's shape. A CPU
// build of the device shapes (TESSEL_DEVICE_SHAPED_KERNELS) gives every space the device's, which
// is what it tests.
#include <type_traits>

#include <Kokkos_Core.hpp>

#include "tessel/runtime/backend/gpu/copy_shape.hpp"
#include "tessel/runtime/backend/host/copy_shape.hpp"

namespace tessel::backend {

#if defined(TESSEL_DEVICE_SHAPED_KERNELS)
template <class Exec>
inline constexpr bool device_shaped_copies = true;
#else
template <class Exec>
inline constexpr bool device_shaped_copies = !Kokkos::SpaceAccessibility<Exec, Kokkos::HostSpace>::accessible;
#endif

// copies_on<Exec>::chunk, ::streams(bytes), ::words(dst, src, len, stream), ::words_4, ::done(stream).
template <class Exec>
using copies_on = std::conditional_t<device_shaped_copies<Exec>, DeviceCopies, HostCopies>;

}  // namespace tessel::backend
