// Starting and ending MPI, and ending the job (world.hpp's transport).
#include <cstdlib>

#include <mpi.h>

#include "../world.hpp"

namespace tessel::distributed {

TransportStart start_transport() {
  TransportStart t;
  int ready = 0;
  MPI_Initialized(&ready);
  if (!ready) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    t.started = true;
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &t.index);
  MPI_Comm_size(MPI_COMM_WORLD, &t.count);
  return t;
}

void end_transport(bool started) {
  if (!started) return;
  int done = 0;
  MPI_Finalized(&done);
  if (!done) MPI_Finalize();
}

void abort_job(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();
}

}  // namespace tessel::distributed
