// The watchdog for blocking MPI calls (mpi_wait.hpp's call_or_abort). MPI's own collectives block
// until every process has come; a process that died, hangs or runs another program would leave the
// others inside them for ever. One thread, started on first use, looks every quarter of
// TESSEL_COLLECTIVE_TIMEOUT_S (at most every second) whether the armed call has passed its
// deadline and, if so, prints the same report as a polled wait and ends this process (it cannot
// call MPI_Abort: MPI runs funneled through the main thread); mpirun then ends the job. Arming
// and disarming wake nothing: on oversubscribed cores a thread woken per call would take a core
// from a process the others are waiting for.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "mpi_wait.hpp"
#include "../world.hpp"

namespace tessel::distributed {
namespace {

using Clock = std::chrono::steady_clock;

struct Watchdog {
  std::mutex mutex;
  long ticket = 0;  // of the armed call; 0: none
  long issued = 0;
  char const* what = nullptr;
  long sequence = 0;
  Clock::time_point start, deadline;
  std::chrono::duration<double> period{1.0};

  [[noreturn]] void watch() {
    for (;;) {
      std::this_thread::sleep_for(period);
      std::lock_guard lock(mutex);
      if (ticket != 0 && Clock::now() > deadline) {
        report_wait(std::chrono::duration<double>(Clock::now() - start).count(), what, sequence);
        std::_Exit(3);
      }
    }
  }
};

// Never destroyed: the thread may still use it while the process exits.
Watchdog& watchdog() {
  static Watchdog* w = [] {
    auto* d = new Watchdog;
    d->period = std::chrono::duration<double>(std::min(1.0, collective_timeout_s() / 4));
    std::thread([d] { d->watch(); }).detach();
    return d;
  }();
  return *w;
}

}  // namespace

long arm_watchdog(char const* what, long sequence) {
  double const limit = collective_timeout_s();  // read here: a bad value throws on this thread
  Watchdog& w = watchdog();
  std::lock_guard lock(w.mutex);
  w.ticket = ++w.issued;
  w.what = what;
  w.sequence = sequence;
  w.start = Clock::now();
  w.deadline = w.start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limit));
  return w.ticket;
}

void disarm_watchdog(long ticket) {
  Watchdog& w = watchdog();
  std::lock_guard lock(w.mutex);
  if (w.ticket == ticket) w.ticket = 0;
}

}  // namespace tessel::distributed
