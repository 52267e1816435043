// CUDA: logical devices share one GPU, each with its own stream.
#include "tessel/runtime/backend/devices.hpp"

#include <exception>

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

}  // namespace backend

std::string_view platform_name() { return "gpu"; }

}  // namespace tessel
