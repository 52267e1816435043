// Point-to-point exchanges and small agreements between processes, over MPI_COMM_WORLD, and the
// polled wait that ends the job when another process never comes (the watchdog).
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <format>
#include <string>
#include <thread>

#include "tessel/core/error.hpp"
#include "tessel/runtime/distributed.hpp"
#include "tessel/runtime/launch.hpp"
#include "mpi_wait.hpp"
#include "../world.hpp"

namespace tessel::distributed {
namespace {

// One tag for every exchange: messages between two processes match in posting order.
constexpr int exchange_tag = 0x7e55;
// MPI counts are ints: a buffer goes as messages of at most 1 GiB.
constexpr std::size_t max_message = std::size_t{1} << 30;

long& exchange_sequence() {
  static long n = 0;
  return n;
}

}  // namespace

long next_wait_sequence() { return ++exchange_sequence(); }

void report_wait(double waited, char const* what, long sequence) {
  char const* step = tessel::detail::running_step_label;
  std::fprintf(stderr,
               "tessel: process %d of %d waited %.0f s for another process in %s #%ld (during %s); "
               "TESSEL_COLLECTIVE_TIMEOUT_S is %.0f s. Another process may have failed, hung, or be running "
               "a different program. Ending the job.\n",
               process_index(), process_count(), waited, what, sequence,
               step ? std::format("plan step '{}'", step).c_str() : "no plan step", collective_timeout_s());
  std::fflush(stderr);
}

void wait_or_abort(std::vector<MPI_Request>& requests, char const* what) {
  long const sequence = next_wait_sequence();
  double const limit = collective_timeout_s();
  auto const start = std::chrono::steady_clock::now();
  for (int spins = 0;; ++spins) {
    int done = 0;
    MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
    if (done) return;
    double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (waited > limit) {
      report_wait(waited, what, sequence);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
    if (spins > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));  // oversubscribed cores
  }
}

Exchange::Exchange() = default;

Exchange::~Exchange() {
  // An exception between posting and wait(): the buffers are about to go, so cancel what is
  // pending (a receive whose send never comes would otherwise wait for ever).
  for (void* r : requests_) {
    auto* req = static_cast<MPI_Request*>(r);
    MPI_Cancel(req);
    MPI_Wait(req, MPI_STATUS_IGNORE);
    delete req;
  }
}

// Posts `bytes` from or into `data` as messages of at most max_message bytes (one for 0 bytes).
template <class Post>
void post_in_pieces(std::vector<void*>& requests, std::byte* data, std::size_t bytes, Post post) {
  do {
    std::size_t n = bytes < max_message ? bytes : max_message;
    auto* req = new MPI_Request;
    post(data, static_cast<int>(n), req);
    requests.push_back(req);
    data += n;
    bytes -= n;
  } while (bytes > 0);
}

void Exchange::send(int process, void const* data, std::size_t bytes) {
  post_in_pieces(requests_, static_cast<std::byte*>(const_cast<void*>(data)), bytes, [&](std::byte* p, int n, auto* req) {
    MPI_Isend(p, n, MPI_BYTE, process, exchange_tag, MPI_COMM_WORLD, req);
  });
}

void Exchange::receive(int process, void* data, std::size_t bytes) {
  post_in_pieces(requests_, static_cast<std::byte*>(data), bytes, [&](std::byte* p, int n, auto* req) {
    MPI_Irecv(p, n, MPI_BYTE, process, exchange_tag, MPI_COMM_WORLD, req);
  });
}

void Exchange::wait() {
  std::vector<MPI_Request> pending;
  for (void* r : requests_) pending.push_back(*static_cast<MPI_Request*>(r));
  for (void* r : requests_) delete static_cast<MPI_Request*>(r);
  requests_.clear();
  if (!pending.empty()) wait_or_abort(pending, "an exchange");
  requests_.clear();
}

std::vector<unsigned long long> all_gather_word(unsigned long long value) {
  std::vector<unsigned long long> out(static_cast<std::size_t>(process_count()), value);
  if (process_count() > 1) {
    std::vector<MPI_Request> request(1);
    MPI_Iallgather(&value, 1, MPI_UNSIGNED_LONG_LONG, out.data(), 1, MPI_UNSIGNED_LONG_LONG, MPI_COMM_WORLD,
                   request.data());
    wait_or_abort(request, "the plan agreement");
  }
  return out;
}

}  // namespace tessel::distributed
