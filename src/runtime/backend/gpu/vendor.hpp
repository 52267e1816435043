#pragma once
// The GPU vendor of this build: the names gpu/'s sources call (gpuSetDevice, gpublasSgemm,
// vendor::stream_of, ...) mapped to CUDA's or HIP's, which differ there only in their names.
#include <Kokkos_Core.hpp>

#if defined(KOKKOS_ENABLE_CUDA)
#include "../cuda/vendor.hpp"
#elif defined(KOKKOS_ENABLE_HIP)
#include "../hip/vendor.hpp"
#else
#error "src/runtime/backend/gpu/ is built only against a Kokkos with the CUDA or HIP backend"
#endif
