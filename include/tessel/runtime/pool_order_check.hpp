#pragma once
// A check, for host builds, of the ordering a GPU needs between device work and the buffer pool.
// On a GPU, kernels, copies and BLAS calls run asynchronously on the devices' streams; a buffer
// that goes back to the pool (buffer_pool.hpp) while work launched since the last fence of every
// device may still read or write it can be handed to another device's stream: a race that host
// builds, where every launch has finished when it returns, never show. With
// TESSEL_CHECK_POOL_ORDER=1 in the environment, such a give-back stops the process (exit status 70)
// naming the last kernel launched (a plan step's label); =report prints each distinct one and goes on.
#include <cstddef>

namespace tessel::detail {

// Watches launches and fences through Kokkos Tools' callbacks (so not beside a loaded Kokkos Tools
// library, whose callbacks they would replace); does nothing unless the variable is set.
void install_pool_order_check();
// Device work Kokkos does not see, which a GPU runs on a stream (a host BLAS call).
void note_device_work(char const* what);
// A buffer of `bytes` goes back to the pool.
void check_pool_order(std::size_t bytes);

// While one lives on a thread, what it launches is the host's own work (a GPU build runs it on the
// host's execution space, done when it returns), not a device's.
class HostWork {
 public:
  HostWork();
  ~HostWork();
  HostWork(HostWork const&) = delete;
  HostWork& operator=(HostWork const&) = delete;
};

}  // namespace tessel::detail
