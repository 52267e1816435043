// GPUs (CUDA and HIP, through gpu/vendor.hpp): logical devices on one GPU, each with its own
// stream, or spread over several GPUs of this process (runtime/device_placement.hpp), each
// device's stream and memory on its GPU.
#include "tessel/runtime/backend/devices.hpp"

#include <algorithm>
#include <exception>
#include <format>

#include "tessel/core/error.hpp"

// Open MPI says whether it was built GPU-aware in its extensions header and whether this run can
// use it (read by the vendor header: TESSEL_MPI_GPU_AWARE).
#if TESSEL_ENABLE_MPI && __has_include(<mpi-ext.h>)
#include <mpi.h>
#include <mpi-ext.h>
#endif

#include "vendor.hpp"

namespace tessel {
namespace backend {

namespace {

// `what` is the call's name without the vendor's prefix ("SetDevice": cudaSetDevice, hipSetDevice).
void check(gpuError_t status, std::string_view what, int gpu) {
  if (status != gpuSuccess)
    throw Error(std::format("{}{} on GPU {} failed: {} ({})", vendor::api_prefix, what, gpu, gpuGetErrorName(status),
                            gpuGetErrorString(status)));
}

// Every pair of the units lets the other read its memory (peer access over NVLink, Infinity Fabric
// or PCIe): the in-process collectives and reshards are kernels that read other devices' blocks in
// place.
void enable_peer_access(std::span<int const> units) {
  std::vector<int> distinct(units.begin(), units.end());
  std::ranges::sort(distinct);
  distinct.erase(std::ranges::unique(distinct).begin(), distinct.end());
  for (int a : distinct) {
    check(gpuSetDevice(a), "SetDevice", a);
    for (int b : distinct) {
      if (a == b) continue;
      int can = 0;
      check(gpuDeviceCanAccessPeer(&can, a, b), "DeviceCanAccessPeer", a);
      if (can == 0)
        throw Error(std::format("GPU {} cannot read GPU {}'s memory (no peer access between them), and tessel's "
                                "in-process collectives read other devices' blocks in place: place this process's "
                                "devices on GPUs that are peers, or run one process per GPU under mpirun "
                                "(the cuda-mpi or hip-mpi preset)",
                                a, b));
      gpuError_t const enabled = gpuDeviceEnablePeerAccess(b, 0);
      if (enabled == gpuErrorPeerAccessAlreadyEnabled) (void)gpuGetLastError();  // (clears it)
      else check(enabled, std::format("DeviceEnablePeerAccess to GPU {}", b), a);
    }
  }
}

}  // namespace

Units available_units() {
  int count = 0;
  check(gpuGetDeviceCount(&count), "GetDeviceCount", vendor::gpu_of(ExecSpace()));
  return {vendor::gpu_of(ExecSpace()), count};
}

std::string unit_name(int unit) { return std::format("GPU {}", unit); }

int unit_of(ExecSpace const& exec) noexcept { return vendor::gpu_of(exec); }

// On the instance's GPU, ordered on its stream where Kokkos allocates stream-ordered.
void* allocate_device_bytes(ExecSpace const& exec, std::size_t bytes) noexcept {
  try {
    return MemSpace().allocate(exec, "tessel::shard", bytes);
  } catch (std::exception const&) {  // Kokkos::Experimental::RawMemoryAllocationFailure
    return nullptr;
  }
}

// After finalize, the memory is left to the driver, which frees it with the context. (impl_create
// is Kokkos' way to name a space on another GPU than its own.)
void free_device_bytes(int unit, void* memory, std::size_t bytes) noexcept {
  if (Kokkos::is_initialized()) MemSpace::impl_create(unit, gpuStream_t{}).deallocate("tessel::shard", memory, bytes);
}

// One stream per device, so that devices' kernels and copies overlap. Devices that all share
// Kokkos' GPU are partitions of its default instance; a device on another GPU gets a stream made
// there, which Kokkos' instance then owns (and destroys with it).
std::vector<ExecSpace> make_device_instances(std::span<int const> units) {
  int const own = vendor::gpu_of(ExecSpace());
  if (std::ranges::all_of(units, [own](int u) { return u == own; }))
    return Kokkos::Experimental::partition_space(ExecSpace(), std::vector<int>(units.size(), 1));
  enable_peer_access(units);
  std::vector<ExecSpace> instances;
  for (int unit : units) {
    check(gpuSetDevice(unit), "SetDevice", unit);
    gpuStream_t stream{};
    check(gpuStreamCreateWithFlags(&stream, gpuStreamNonBlocking), "StreamCreate", unit);
    instances.emplace_back(stream, Kokkos::Impl::ManageStream::yes);
  }
  check(gpuSetDevice(own), "SetDevice", own);
  return instances;
}

bool mpi_reads_device_memory() noexcept {
#if defined(TESSEL_MPI_GPU_AWARE)
  return TESSEL_MPI_GPU_AWARE();
#else
  return false;
#endif
}

}  // namespace backend

std::string_view platform_name() { return "gpu"; }

}  // namespace tessel
