// CUDA: logical devices on one GPU, each with its own stream, or spread over several GPUs of this
// process (runtime/device_placement.hpp), each device's stream and memory on its GPU.
#include "tessel/runtime/backend/devices.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <exception>
#include <format>

#include "tessel/core/error.hpp"

// Open MPI says whether it was built CUDA-aware in its extensions header (MPIX_CUDA_AWARE_SUPPORT)
// and whether this run can use it (MPIX_Query_cuda_support).
#if TESSEL_ENABLE_MPI && __has_include(<mpi-ext.h>)
#include <mpi.h>
#include <mpi-ext.h>
#endif

namespace tessel {
namespace backend {

namespace {

void check(cudaError_t status, std::string_view what, int gpu) {
  if (status != cudaSuccess)
    throw Error(std::format("{} on GPU {} failed: {} ({})", what, gpu, cudaGetErrorName(status),
                            cudaGetErrorString(status)));
}

// Every pair of the units lets the other read its memory (NVLink or PCIe peer access): the
// in-process collectives and reshards are kernels that read other devices' blocks in place.
void enable_peer_access(std::span<int const> units) {
  std::vector<int> distinct(units.begin(), units.end());
  std::ranges::sort(distinct);
  distinct.erase(std::ranges::unique(distinct).begin(), distinct.end());
  for (int a : distinct) {
    check(cudaSetDevice(a), "cudaSetDevice", a);
    for (int b : distinct) {
      if (a == b) continue;
      int can = 0;
      check(cudaDeviceCanAccessPeer(&can, a, b), "cudaDeviceCanAccessPeer", a);
      if (can == 0)
        throw Error(std::format("GPU {} cannot read GPU {}'s memory (no peer access between them), and tessel's "
                                "in-process collectives read other devices' blocks in place: place this process's "
                                "devices on GPUs that are peers, or run one process per GPU under mpirun "
                                "(the cuda-mpi preset)",
                                a, b));
      cudaError_t const enabled = cudaDeviceEnablePeerAccess(b, 0);
      if (enabled == cudaErrorPeerAccessAlreadyEnabled) (void)cudaGetLastError();  // (clears it)
      else check(enabled, std::format("cudaDeviceEnablePeerAccess to GPU {}", b), a);
    }
  }
}

}  // namespace

Units available_units() {
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount", ExecSpace().cuda_device());
  return {ExecSpace().cuda_device(), count};
}

std::string unit_name(int unit) { return std::format("GPU {}", unit); }

int unit_of(ExecSpace const& exec) noexcept { return exec.cuda_device(); }

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
  if (Kokkos::is_initialized()) MemSpace::impl_create(unit, cudaStream_t{}).deallocate("tessel::shard", memory, bytes);
}

// One stream per device, so that devices' kernels and copies overlap. Devices that all share
// Kokkos' GPU are partitions of its default instance; a device on another GPU gets a stream made
// there, which Kokkos' instance then owns (and destroys with it).
std::vector<ExecSpace> make_device_instances(std::span<int const> units) {
  int const own = ExecSpace().cuda_device();
  if (std::ranges::all_of(units, [own](int u) { return u == own; }))
    return Kokkos::Experimental::partition_space(ExecSpace(), std::vector<int>(units.size(), 1));
  enable_peer_access(units);
  std::vector<ExecSpace> instances;
  for (int unit : units) {
    check(cudaSetDevice(unit), "cudaSetDevice", unit);
    cudaStream_t stream{};
    check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate", unit);
    instances.emplace_back(stream, Kokkos::Impl::ManageStream::yes);
  }
  check(cudaSetDevice(own), "cudaSetDevice", own);
  return instances;
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
