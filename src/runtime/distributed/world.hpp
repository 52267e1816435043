#pragma once
// What the runtime's cross-process code shares (not installed): the process model's internals and
// point-to-point exchanges of bytes. Declared here, defined by the transport: MPI's in mpi/, or in
// a build without MPI the one-process stub no_mpi/; CMake compiles one of the two folders. Only
// code under src/runtime/distributed/mpi/ names MPI (and a GPU backend's devices.cpp, which asks
// MPI whether it reads device memory).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "tessel/core/box.hpp"

namespace tessel::distributed {

// Whether mpirun or srun started this process (Open MPI's or PMIx's variables are set).
bool launched_by_mpi();

// The transport started (MPI_Init_thread unless the program had called it): which process this is
// of how many, and whether start_transport started it (then end_transport ends it). Without MPI:
// process 0 of 1, and an Error under a launcher, where each process would run alone.
struct TransportStart {
  int index = 0, count = 1;
  bool started = false;
};
TransportStart start_transport();
void end_transport(bool started);
// Ends every process of the job now (an uncaught exception on one: the others would wait for it).
[[noreturn]] void abort_job(int code);
// Ends MPI if initialize() started it (the last ScopeGuard's end).
void finalize();

// Whether collectives across processes move device buffers through pinned host memory rather
// than handing them to MPI: TESSEL_MPI_STAGING=host always, =direct never, unset or =auto when the
// MPI cannot read device memory (backend::mpi_reads_device_memory). Read once, at initialize(); any
// other value is an Error naming the variable and the values it takes. Staging on a host backend
// only adds copies: CI runs the collectives with it to test the path GPUs without a GPU-aware MPI take.
bool stages_through_host();

// Sends and receives of byte buffers between this process and others, posted in any order and
// completed together by wait() (so no pair of processes can deadlock on the order). Messages
// between two processes match in the order they are posted on both sides: every process walks
// the same global description (the same devices, boxes and order), so both sides agree.
// Buffers must stay alive and untouched until wait() returns. A single process posts nothing.
class Exchange {
 public:
  Exchange();
  ~Exchange();
  Exchange(Exchange const&) = delete;
  Exchange& operator=(Exchange const&) = delete;
  void send(int process, void const* data, std::size_t bytes);
  void receive(int process, void* data, std::size_t bytes);
  void wait();

 private:
  std::vector<void*> requests_;  // MPI_Request, type-erased so that this header needs no mpi.h
};

// How long a process waits for the others in one exchange before it reports and ends the job
// (TESSEL_COLLECTIVE_TIMEOUT_S, default 300 s).
double collective_timeout_s();

// Every process's 64-bit value, in process order (MPI_Allgather).
std::vector<unsigned long long> all_gather_word(unsigned long long value);

// Boxes moved between this process and the others of one collective's processes (`processes`:
// world ranks, increasing, this process among them), over their cached communicator
// (communicators.cpp). Each send or receive names a region of the global index space inside a
// row-major buffer holding the box `held`; the elements go from the sender's buffer straight into
// the receiver's (a strided region travels as an MPI subarray datatype), or, when
// stages_through_host(), packed into pinned host memory, sent, and unpacked by wait().
// A send and its receive name regions of the same extent, and two processes post theirs to each
// other in the same order (both walk the same description of the collective). Everything is
// posted at once and completed by wait(), under the watchdog, whose report names `what`. Buffers
// must stay alive and untouched until wait() returns.
class BoxTransfer {
 public:
  BoxTransfer(std::vector<int> processes, std::size_t element_size, char const* what);
  ~BoxTransfer();
  BoxTransfer(BoxTransfer const&) = delete;
  BoxTransfer& operator=(BoxTransfer const&) = delete;
  void send(int process, std::byte const* data, Box const& held, Box const& region);
  void receive(int process, std::byte* data, Box const& held, Box const& region);
  void wait();

 private:
  struct State;  // MPI's handles, kept out of this header
  int rank_of(int process) const;
  void post(bool sending, int process, std::byte* data, Box const& held, Box const& region);
  std::vector<int> processes_;
  std::size_t element_;
  char const* what_;
  std::unique_ptr<State> state_;
};

// MPI's own all-gather over the communicator of `processes`: processes[r]'s counts[r] elements go
// to `out` at element displacements[r] on every process. This process's come from `send` (all of
// them, contiguous), or, when `send` is null, are already in place in `out`. False (and nothing
// sent) when a count or displacement does not fit MPI's ints, or when messages are staged through
// host memory; the caller then moves the boxes itself.
bool all_gather_ranges(std::vector<int> const& processes, std::byte const* send, std::byte* out,
                       std::size_t element_size, std::vector<std::int64_t> const& counts,
                       std::vector<std::int64_t> const& displacements, char const* what);

// MPI's own all-to-all over the communicator of `processes`, for one buffer of each side per
// process: processes[r] receives send_counts[r] elements from `in` at element send_starts[r], and
// this process receives receive_counts[r] elements from processes[r] into `out` at element
// receive_starts[r]. False (and nothing sent) when a count or start does not fit MPI's ints, or
// when messages are staged through host memory.
bool all_to_all_runs(std::vector<int> const& processes, std::byte const* in, std::byte* out, std::size_t element_size,
                     std::vector<std::int64_t> const& send_counts, std::vector<std::int64_t> const& send_starts,
                     std::vector<std::int64_t> const& receive_counts, std::vector<std::int64_t> const& receive_starts,
                     char const* what);

// Frees the collectives' communicators (finalize(), before MPI ends).
void free_communicators();

}  // namespace tessel::distributed
