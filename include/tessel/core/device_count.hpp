#pragma once
// How many logical devices there are, like jax.device_count() and jax.local_device_count(). The
// counts are plain values the core can read (make_mesh needs them); the devices themselves, with
// their Kokkos execution-space instances, are in runtime/device.hpp, and the processes in
// runtime/distributed.hpp.
namespace tessel {

// Every process's devices together (local_device_count() x the process count). Device ids are
// global: 0 .. device_count() - 1, ordered by process then local id.
int device_count();
// This process's devices: TESSEL_NUM_DEVICES from the environment on first use (default 1), or
// the last set_device_count.
int local_device_count();
// Sets the number of this process's logical devices (>= 1); only in a single process. Existing
// meshes keep their device ids; a mesh whose ids exceed the new count fails when used.
void set_device_count(int n);

}  // namespace tessel
