#pragma once
// What the files of src/runtime/distributed/ share that names MPI (never included elsewhere).
#include <mpi.h>

#include <vector>

namespace tessel::distributed {

// Waits for every request, or ends the job after TESSEL_COLLECTIVE_TIMEOUT_S (the watchdog): a
// process that died, hangs or runs another program would otherwise leave the others waiting for
// ever. `what` names the exchange in the report ("an exchange", "the plan agreement", ...).
void wait_or_abort(std::vector<MPI_Request>& requests, char const* what);

// Runs `call`, a blocking MPI call (one of MPI's own collectives, which cannot be polled), under
// the same watchdog: a thread that, if `call` has not returned within TESSEL_COLLECTIVE_TIMEOUT_S,
// prints the same report and ends this process (mpirun then ends the job).
template <class Call>
void call_or_abort(char const* what, Call&& call);

// The watchdog's parts: the sequence number of the next wait, its report, and the thread's
// arming (arm returns the ticket that disarm takes).
long next_wait_sequence();
void report_wait(double waited, char const* what, long sequence);
long arm_watchdog(char const* what, long sequence);
void disarm_watchdog(long ticket);

template <class Call>
void call_or_abort(char const* what, Call&& call) {
  long const ticket = arm_watchdog(what, next_wait_sequence());
  call();
  disarm_watchdog(ticket);
}

// The communicator over `processes` (world ranks, increasing, this process among them); see
// world.hpp's communicator_for.
MPI_Comm communicator(std::vector<int> const& processes);

}  // namespace tessel::distributed
