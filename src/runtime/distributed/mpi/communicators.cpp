// Communicators for collectives' groups. A collective over some mesh axes runs once per group of
// devices (device_groups); the processes holding a group's members get a communicator of their
// own, made when a collective first spans exactly those processes and kept until finalize(). So
// every later collective of that (mesh, axes) pair, and of any other whose groups fall on the
// same processes, costs no set-up, and messages of different groups never meet on one
// communicator. A (mesh, axes) pair whose groups lie on several sets of processes (the dp groups
// of a 4 x 2 mesh over 4 processes) has one communicator per set; a process in two groups on the
// same set (2 processes x 4 devices) uses one for both.
//
// MPI_Comm_create_group is collective over the new communicator's processes only, so a group on
// processes {0, 1} never waits for process 2. The processes reach the creation in the same order:
// every process runs the same plan's collectives in the same order, each one the groups it has
// members in. The creation itself cannot be polled, so the processes first meet in an exchange
// the watchdog covers: a process that never comes is reported there rather than hanging inside
// MPI.
#include <algorithm>
#include <cstdint>
#include <format>
#include <map>
#include <string>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/runtime/communicators.hpp"
#include "tessel/runtime/distributed.hpp"
#include "mpi_wait.hpp"
#include "../world.hpp"

namespace tessel::distributed {
namespace {

// Processes (increasing world ranks) -> communicator.
std::map<std::vector<int>, MPI_Comm>& cache() {
  static std::map<std::vector<int>, MPI_Comm> c;
  return c;
}

constexpr int create_tag = 0x7e56;

std::string list(std::vector<int> const& processes) {
  std::string s;
  for (int p : processes) s += std::format("{}{}", s.empty() ? "" : ", ", p);
  return s;
}

MPI_Comm make(std::vector<int> const& processes) {
  // Meet first, under the watchdog (the hello's bytes carry nothing).
  {
    Exchange meet;
    unsigned char out = 1;
    std::vector<unsigned char> in(processes.size());
    for (std::size_t k = 0; k < processes.size(); ++k)
      if (processes[k] != process_index()) {
        meet.send(processes[k], &out, 1);
        meet.receive(processes[k], &in[k], 1);
      }
    meet.wait();
  }
  MPI_Group world = MPI_GROUP_NULL, group = MPI_GROUP_NULL;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, static_cast<int>(processes.size()), processes.data(), &group);
  MPI_Comm comm = MPI_COMM_NULL;
  int rc = MPI_Comm_create_group(MPI_COMM_WORLD, group, create_tag, &comm);
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  if (rc != MPI_SUCCESS || comm == MPI_COMM_NULL)
    throw Error(std::format("tessel: process {} could not make a communicator for processes {} (MPI error {})",
                            process_index(), list(processes), rc));
  return comm;
}

}  // namespace

MPI_Comm communicator(std::vector<int> const& processes) {
  if (!std::is_sorted(processes.begin(), processes.end()) ||
      std::adjacent_find(processes.begin(), processes.end()) != processes.end() ||
      !std::binary_search(processes.begin(), processes.end(), process_index()))
    throw Error(std::format("tessel: internal error: a communicator for processes {} on process {} (they must "
                            "increase and include this process)",
                            list(processes), process_index()));
  auto& c = cache();
  auto it = c.find(processes);
  if (it == c.end()) it = c.emplace(processes, make(processes)).first;
  return it->second;
}

int communicator_count() {
  return static_cast<int>(cache().size());
}

void free_communicators() {
  int done = 0;
  MPI_Finalized(&done);
  for (auto& [processes, comm] : cache())
    if (!done) MPI_Comm_free(&comm);
  cache().clear();
}

}  // namespace tessel::distributed
