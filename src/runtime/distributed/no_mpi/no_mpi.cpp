// The transport of a build without MPI (CMake compiles this folder instead of mpi/): one process,
// which never sends a message. Reaching a send is a bug of the caller (every path that would send
// first asks whether another process holds the data), reported as such.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/runtime/communicators.hpp"
#include "tessel/runtime/distributed.hpp"
#include "../world.hpp"

namespace tessel::distributed {
namespace {

[[noreturn]] void no_mpi(char const* what) {
  throw Error(std::string("tessel: internal error: ") + what + " in a build without MPI");
}

}  // namespace

TransportStart start_transport() {
  if (launched_by_mpi())
    throw Error("tessel::distributed::initialize: this tessel was built without MPI (use the `mpi` preset); "
                "under mpirun each process would run alone");
  return {};
}
void end_transport(bool) {}
void abort_job(int) { std::abort(); }

Exchange::Exchange() = default;
Exchange::~Exchange() = default;
void Exchange::send(int, void const*, std::size_t) { no_mpi("a message to another process"); }
void Exchange::receive(int, void*, std::size_t) { no_mpi("a message from another process"); }
void Exchange::wait() { requests_.clear(); }

std::vector<unsigned long long> all_gather_word(unsigned long long value) { return {value}; }

struct BoxTransfer::State {};
BoxTransfer::BoxTransfer(std::vector<int> processes, std::size_t element_size, char const* what)
    : processes_(std::move(processes)), element_(element_size), what_(what) {
  no_mpi("a collective across processes");
}
BoxTransfer::~BoxTransfer() = default;
int BoxTransfer::rank_of(int) const { return 0; }
void BoxTransfer::post(bool, int, std::byte*, Box const&, Box const&) {}
void BoxTransfer::wait() {}
void BoxTransfer::send(int, std::byte const*, Box const&, Box const&) {}
void BoxTransfer::receive(int, std::byte*, Box const&, Box const&) {}

bool all_gather_ranges(std::vector<int> const&, std::byte const*, std::byte*, std::size_t,
                       std::vector<std::int64_t> const&, std::vector<std::int64_t> const&, char const*) {
  no_mpi("a collective across processes");
}

bool all_to_all_runs(std::vector<int> const&, std::byte const*, std::byte*, std::size_t,
                     std::vector<std::int64_t> const&, std::vector<std::int64_t> const&,
                     std::vector<std::int64_t> const&, std::vector<std::int64_t> const&, char const*) {
  no_mpi("a collective across processes");
}

int communicator_count() { return 0; }
void free_communicators() {}

}  // namespace tessel::distributed
