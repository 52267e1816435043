#pragma once
// What differs by backend in a logical device's memory and execution instance. Each backend's
// folder under src/runtime/backend/ defines these (and runtime/device.hpp's platform_name()).
//
// A unit is what logical devices are placed on: a GPU, or the host. Several logical devices may
// share a unit (one host's cores, or one GPU split into streams); on a GPU backend they may also
// be spread over several units (runtime/device_placement.hpp), each device's memory then on its
// own GPU.
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "tessel/runtime/device.hpp"

namespace tessel::backend {

// The units this process may place devices on: `count` of them from `first` (the one Kokkos was
// initialized on). A host backend has one, the host.
struct Units {
  int first = 0;
  int count = 1;
};
Units available_units();
// How a unit is printed: "GPU 3", "the host".
std::string unit_name(int unit);
// The unit an execution-space instance runs on (where memory for its kernels is allocated).
int unit_of(ExecSpace const& exec) noexcept;

// `bytes` of the memory of the unit `exec` runs on, aligned at least as Kokkos aligns (64
// bytes); null when the unit has no room.
void* allocate_device_bytes(ExecSpace const& exec, std::size_t bytes) noexcept;
// Memory from allocate_device_bytes on `unit`, of that size; safe after Kokkos is finalized (what
// it cannot free then is left to the driver, which frees it with its context).
void free_device_bytes(int unit, void* memory, std::size_t bytes) noexcept;
// One execution-space instance per logical device of this process, device k's on units[k]. Where
// devices are on different units, each unit can read the others' memory afterwards (collectives
// and reshards read other devices' blocks in place), or it fails naming the units that cannot.
std::vector<ExecSpace> make_device_instances(std::span<int const> units);
// Whether the MPI library can send from and receive into allocate_device_bytes' memory: always
// on host backends; on GPUs when the MPI says it is GPU-aware. Where it cannot, collectives across
// processes stage their messages through pinned host memory (distributed::stages_through_host).
bool mpi_reads_device_memory() noexcept;

}  // namespace tessel::backend
