#pragma once
// What the collectives across processes (across_processes.cpp) share: the processes of a group and
// this process's members, receive buffers kept from call to call, local copies, and where an
// all-gather's pieces lie when each process's are one range.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tessel/core/box.hpp"
#include "tessel/runtime/collectives.hpp"

namespace tessel::across {

// The host waits for this process's members' devices: MPI reads and writes their buffers, and the
// steps after the collective read what it wrote.
void fence_members(std::span<GroupMember const> group);
bool all_local(std::span<GroupMember const> group);
int process_of(GroupMember const& m);

// The processes a group's members are on (increasing) and this process's members, after checking
// that every member names a device (a member of another process has one too).
struct GroupProcesses {
  int me;
  std::vector<int> processes;
  std::vector<std::size_t> local;

  GroupProcesses(char const* what, std::span<GroupMember const> group);
  // This process's first member with an output (the one remote data lands in), or null.
  GroupMember const* first_output(std::span<GroupMember const> group) const;
};

// Receive buffers kept from call to call: allocating (and first touching) tens of MB per call
// would cost as much as moving them. Never cleared: only the regions received are read. Device
// memory, as the members' buffers: the combine and the copies that read them are device kernels.
// On the unit of `device`, whose kernels read it.
std::byte* scratch(int device, std::size_t slot, std::size_t bytes);

std::size_t bytes_of(Box const& b, std::size_t element);

// Copies `region` between two buffers of this process (src holds src_box, dst holds dst_box), on
// the instance of `device`, which holds dst. `operation_bytes`: what the whole collective writes
// here, which decides whether the copies write around the caches (backend::streams).
// Asynchronous: the collective fences before it returns.
void copy_here(int device, std::byte const* src, Box const& src_box, std::byte* dst, Box const& dst_box,
               Box const& region, std::size_t element, std::size_t operation_bytes);

// Where each process's all-gather pieces lie in the whole's elements, when each process's are
// one contiguous range (counts[r] elements from starts[r] for processes[r]).
struct Ranges {
  std::vector<std::int64_t> starts, counts;
};
std::optional<Ranges> process_ranges(std::span<GroupMember const> group, std::span<Box const> pieces, Box const& whole,
                                     std::vector<int> const& processes);

}  // namespace tessel::across
