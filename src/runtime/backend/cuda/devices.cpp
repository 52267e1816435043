// CUDA: logical devices share one GPU, each with its own stream.
#include "tessel/runtime/backend/devices.hpp"

#include <exception>

// Open MPI says whether it was built CUDA-aware in its extensions header (MPIX_CUDA_AWARE_SUPPORT)
// and whether this run can use it (MPIX_Query_cuda_support).
#if TESSEL_ENABLE_MPI && __has_include(<mpi-ext.h>)
#include <mpi.h>
#include <mpi-ext.h>
#endif

namespace tessel {
namespace backend {

void* allocate_device_bytes(std::size_t bytes) noexcept {
  try {
    return Kokkos::kokkos_malloc<MemSpace>("tessel::shard", bytes);
  } catch (std::exception const&) {  // Kokkos::Experimental::RawMemoryAllocationFailure
    return nullptr;
  }
}

// After finalize, the memory is left to the driver, which frees it with the context.
void free_device_bytes(void* memory) noexcept {
  if (Kokkos::is_initialized()) Kokkos::kokkos_free<MemSpace>(memory);
}

// One stream per device, so that devices' kernels and copies overlap.
std::vector<ExecSpace> make_device_instances(int n) {
  return Kokkos::Experimental::partition_space(ExecSpace(), std::vector<int>(static_cast<std::size_t>(n), 1));
}

bool mpi_reads_device_memory() noexcept {
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

}  // namespace backend

std::string_view platform_name() { return "gpu"; }

}  // namespace tessel
