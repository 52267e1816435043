// tessel::ScopeGuard: the runtime's lifetime (the process model, Kokkos, the devices, their queues
// and the memory pool), started and ended in the order each needs.
#include <Kokkos_Core.hpp>

#include "tessel/core/error.hpp"
#include "tessel/runtime/buffer_pool.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/device_placement.hpp"
#include "tessel/runtime/distributed.hpp"
#include "tessel/runtime/stream.hpp"
#include "device_lifetime.hpp"
#include "distributed/world.hpp"

namespace tessel {

// The devices are made at start-up, so that their placement is printed by explain from the first
// plan on. A start-up setting the machine cannot honour (TESSEL_NUM_DEVICES, TESSEL_GPUS) is not
// thrown from here: a guard is made outside any try block, where a throw ends the program through
// std::terminate. The same tessel::Error is thrown again, catchably, by the first call that needs
// the devices (device_count(), make_mesh, device_put, ...), which re-reads the setting.
void ScopeGuard::start() {
  try {
    (void)device_placement();
  } catch (Error const&) {
    // (kept for the first call that needs the devices: it fails the same way)
  } catch (...) {
    if (owns_kokkos_) {
      Kokkos::finalize();
      distributed::finalize();
    }
    throw;
  }
}
// Under mpirun or srun, the process model starts first (MPI before Kokkos, as Kokkos asks).
ScopeGuard::ScopeGuard() : owns_kokkos_(!Kokkos::is_initialized()) {
  if (distributed::launched_by_mpi()) distributed::initialize();
  if (owns_kokkos_) Kokkos::initialize();
  start();
}
ScopeGuard::ScopeGuard(int& argc, char* argv[]) : owns_kokkos_(!Kokkos::is_initialized()) {
  if (distributed::launched_by_mpi()) distributed::initialize();
  if (owns_kokkos_) Kokkos::initialize(argc, argv);
  start();
}
ScopeGuard::~ScopeGuard() {
  detail::stop_host_queues();  // (their work done: it may use the devices)
  detail::forget_devices();
  detail::release_pooled_memory();
  if (owns_kokkos_) {
    Kokkos::finalize();
    distributed::finalize();
  }
}

}  // namespace tessel
