#pragma once
// What differs by backend in a logical device's memory and execution instance. Each backend's
// folder under src/runtime/backend/ defines these (and runtime/device.hpp's platform_name()).
#include <cstddef>
#include <vector>

#include "tessel/runtime/device.hpp"

namespace tessel::backend {

// `bytes` of the devices' memory space, aligned at least as Kokkos aligns (64 bytes); null when
// the space has no room.
void* allocate_device_bytes(std::size_t bytes) noexcept;
// Memory from allocate_device_bytes; safe after Kokkos is finalized (what it cannot free then is
// left to the driver, which frees it with its context).
void free_device_bytes(void* memory) noexcept;
// One execution-space instance per logical device of this process.
std::vector<ExecSpace> make_device_instances(int n);
// Whether the MPI library can send from and receive into allocate_device_bytes' memory: always
// on host backends; on GPUs when the MPI says it is GPU-aware. Where it cannot, collectives across
// processes stage their messages through pinned host memory (distributed::stages_through_host).
bool mpi_reads_device_memory() noexcept;

}  // namespace tessel::backend
