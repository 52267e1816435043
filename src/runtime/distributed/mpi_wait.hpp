#pragma once
// What the files of src/runtime/distributed/ share that names MPI (never included elsewhere).
#if TESSEL_ENABLE_MPI
#include <mpi.h>

#include <vector>

namespace tessel::distributed {

// Waits for every request, or ends the job after TESSEL_COLLECTIVE_TIMEOUT_S (the watchdog): a
// process that died, hangs or runs another program would otherwise leave the others waiting for
// ever. `what` names the exchange in the report ("an exchange", "the plan agreement", ...).
void wait_or_abort(std::vector<MPI_Request>& requests, char const* what);

// The communicator over `processes` (world ranks, increasing, this process among them); see
// world.hpp's communicator_for.
MPI_Comm communicator(std::vector<int> const& processes);

}  // namespace tessel::distributed
#endif
