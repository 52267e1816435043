#pragma once
// How many logical devices this process has, like XLA's host platform device count. The count is
// a plain value the core can read (make_mesh needs it); the devices themselves, with their Kokkos
// execution-space instances, are in runtime/device.hpp.
namespace tessel {

// TESSEL_NUM_DEVICES from the environment on first use (default 1), or the last set_device_count.
int device_count();
// Sets the number of logical devices (>= 1). Existing meshes keep their device ids; a mesh whose
// ids exceed the new count fails when used.
void set_device_count(int n);

}  // namespace tessel
