#pragma once
// Logical devices. Each owns shards in the backend's memory space and runs kernels on its own
// execution-space instance. On host backends all devices share the host's cores (several logical
// devices in one process, the way JAX runs N CPU devices); on GPU backends each device gets its
// own stream.
#include <Kokkos_Core.hpp>
#include <string_view>

#include "tessel/core/device_count.hpp"

namespace tessel {

using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;
using HostExecSpace = Kokkos::DefaultHostExecutionSpace;

struct Device {
  int id;
  ExecSpace exec;  // kernels and copies for this device's shards are enqueued here
};

// The device with this (global) id; fails naming the id and the device count when there is none,
// and naming the process that holds it when it is another process's.
Device const& device(int id);
// Whether this process holds the device (runtime/distributed.hpp).
bool is_local_device(int id);
// Whether two devices allocate in one memory, so that replicas can share one buffer: two devices
// of this process on one unit (one host, or one GPU split into logical devices;
// runtime/device_placement.hpp).
bool shares_memory(int a, int b);
// Waits for every device's queued work.
void fence_all_devices();
// "cpu" on host backends, "gpu" on CUDA and HIP: what visualize_array_sharding prints.
std::string_view platform_name();

// Initializes Kokkos (and tessel's devices) for the guard's lifetime, like Kokkos::ScopeGuard.
// Every tensor must be gone before it ends.
class ScopeGuard {
 public:
  ScopeGuard();
  ScopeGuard(int& argc, char* argv[]);
  ~ScopeGuard();
  ScopeGuard(ScopeGuard const&) = delete;
  ScopeGuard& operator=(ScopeGuard const&) = delete;

 private:
  void start();
  bool owns_kokkos_;
};

}  // namespace tessel
