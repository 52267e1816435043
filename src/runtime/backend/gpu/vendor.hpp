#pragma once
// The GPU vendor of this build: the names gpu/'s sources call (gpuSetDevice, gpublasSgemm,
// vendor::stream_of, ...) mapped to CUDA's or HIP's, which differ there only in their names.
#include <format>

#include <Kokkos_Core.hpp>

#include "tessel/core/error.hpp"

#if defined(KOKKOS_ENABLE_CUDA)
#include "../cuda/vendor.hpp"
#elif defined(KOKKOS_ENABLE_HIP)
#include "../hip/vendor.hpp"
#else
#error "src/runtime/backend/gpu/ is built only against a Kokkos with the CUDA or HIP backend"
#endif

namespace tessel::backend::vendor {

// Throws unless the runtime call succeeded, naming it without the vendor's prefix ("EventRecord":
// cudaEventRecord, hipEventRecord).
inline void check(gpuError_t status, char const* what) {
  if (status != gpuSuccess)
    throw Error(std::format("{}{} failed: {} ({})", api_prefix, what, gpuGetErrorName(status), gpuGetErrorString(status)));
}

}  // namespace tessel::backend::vendor
