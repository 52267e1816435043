// Collectives whose members are on several processes. Each process sends its members' inputs to
// the group's other processes and receives theirs (point to point, runtime/distributed), then runs
// the in-process collective over the whole group with the received inputs in place of the remote
// members' buffers, writing only its own members' outputs. The combining is the in-process code's,
// in member order, so a result has the same bits however the devices are spread over processes.
//
// The all-reduce is a reduce-scatter then an all-gather over processes (2 (P - 1) / P of a block
// sent per device, as a ring). The others still move every member's input to every process of
// the group, which is more than they need. Host backends only (the received data is host memory).
#include <algorithm>
#include <cstring>
#include <format>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/runtime/collectives.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/distributed.hpp"
#include "../distributed/world.hpp"

namespace tessel {
namespace {

bool all_local(std::span<GroupMember const> group) {
  return std::all_of(group.begin(), group.end(), [](GroupMember const& m) { return is_local_device(m.device); });
}

// The processes a group's members are on, in order of their first member, and this process's members.
struct Spread {
  int me = distributed::process_index();
  std::vector<int> processes;
  std::vector<std::size_t> local;

  explicit Spread(std::span<GroupMember const> group) {
    for (std::size_t k = 0; k < group.size(); ++k) {
      int p = distributed::process_of(group[k].device);
      if (std::find(processes.begin(), processes.end(), p) == processes.end()) processes.push_back(p);
      if (p == me) local.push_back(k);
    }
  }
};

// The group as this process runs it in process: remote members read their received inputs and
// write nothing, on one of this process's devices (the received copies are this process's memory).
struct Staged {
  std::vector<std::vector<std::byte>> received;
  std::vector<GroupMember> group;
  bool any_local = false;
};

// in_bytes[k]: the size of member k's input.
Staged stage(std::span<GroupMember const> group, std::vector<std::size_t> const& in_bytes) {
  Staged s;
  s.group.assign(group.begin(), group.end());
  s.received.resize(group.size());
  Spread const spread(group);
  int const me = spread.me;
  s.any_local = !spread.local.empty();
  if (!s.any_local) return s;  // no member here: this process takes no part
  int const local_device = group[spread.local[0]].device;
  fence_all_devices();         // the inputs are complete
  distributed::Exchange exchange;
  for (std::size_t k = 0; k < group.size(); ++k) {
    int p = distributed::process_of(group[k].device);
    if (p == me) {
      for (int q : spread.processes)
        if (q != me) exchange.send(q, group[k].in, in_bytes[k]);
    } else {
      s.received[k].resize(in_bytes[k]);
      exchange.receive(p, s.received[k].data(), in_bytes[k]);
      s.group[k] = GroupMember{local_device, s.received[k].data(), nullptr};
    }
  }
  exchange.wait();
  return s;
}

std::size_t bytes_of(Box const& b, DType dtype) { return static_cast<std::size_t>(b.num_elements()) * size_of(dtype); }

std::vector<std::size_t> sizes(std::span<Box const> boxes, DType dtype) {
  std::vector<std::size_t> out;
  for (auto const& b : boxes) out.push_back(bytes_of(b, dtype));
  return out;
}

class AcrossProcesses final : public Collectives {
 public:
  [[nodiscard]] char const* name() const override { return "across processes"; }

  // A reduce-scatter then an all-gather over the group's processes: process q combines chunk q
  // of every member's input, in member order (each element's order is the in-process one, so
  // the bits are too), and sends it to the others. Each process sends 2 (P - 1) / P of a block
  // per device it holds, as a ring all-reduce does.
  void all_reduce(DType dtype, ReduceOp op, std::span<GroupMember const> group, Box const& held) override {
    if (all_local(group)) return in_process_collectives().all_reduce(dtype, op, group, held);
    Spread const spread(group);
    int const me = spread.me;
    auto const& processes = spread.processes;
    auto const& local = spread.local;
    if (local.empty()) return;  // no member here
    std::size_t const element = size_of(dtype);
    auto const count = static_cast<std::size_t>(held.num_elements());
    auto const parts = processes.size();
    auto chunk_begin = [&](std::size_t c) { return count * c / parts; };
    std::size_t const mine = static_cast<std::size_t>(std::find(processes.begin(), processes.end(), me) - processes.begin());
    std::size_t const begin = chunk_begin(mine), length = chunk_begin(mine + 1) - begin;
    fence_all_devices();  // the inputs are complete
    // 1. Every member's part of chunk `mine` here; this process's members' other chunks to their owners.
    std::vector<std::vector<std::byte>> received(group.size());
    std::vector<GroupMember> part(group.size());
    {
      distributed::Exchange exchange;
      for (std::size_t k = 0; k < group.size(); ++k) {
        int p = distributed::process_of(group[k].device);
        if (p == me) {
          for (std::size_t c = 0; c < parts; ++c)
            if (c != mine)
              exchange.send(processes[c], group[k].in + chunk_begin(c) * element,
                            (chunk_begin(c + 1) - chunk_begin(c)) * element);
          part[k] = GroupMember{group[k].device, group[k].in + begin * element, nullptr};
        } else {
          received[k].resize(length * element);
          exchange.receive(p, received[k].data(), received[k].size());
          part[k] = GroupMember{group[local[0]].device, received[k].data(), nullptr};
        }
      }
      exchange.wait();
    }
    // 2. Chunk `mine` combined into the first local member's output.
    GroupMember const& first = group[local[0]];
    part[local[0]].out = first.out + begin * element;
    Box const span{{0, static_cast<std::int64_t>(length)}};
    in_process_collectives().all_reduce(dtype, op, part, span);
    // 3. The combined chunks to every process of the group; then every local output a copy.
    {
      distributed::Exchange exchange;
      for (std::size_t c = 0; c < parts; ++c) {
        std::size_t b = chunk_begin(c), n = chunk_begin(c + 1) - b;
        if (c == mine) {
          for (std::size_t q = 0; q < parts; ++q)
            if (q != mine) exchange.send(processes[q], first.out + b * element, n * element);
        } else {
          exchange.receive(processes[c], first.out + b * element, n * element);
        }
      }
      exchange.wait();
    }
    for (std::size_t j = 1; j < local.size(); ++j)
      std::memcpy(group[local[j]].out, first.out, count * element);  // host memory (see the top)
  }
  void reduce_scatter(DType dtype, ReduceOp op, std::span<GroupMember const> group, Box const& held,
                      std::span<Box const> pieces) override {
    if (all_local(group)) return in_process_collectives().reduce_scatter(dtype, op, group, held, pieces);
    auto s = stage(group, std::vector<std::size_t>(group.size(), bytes_of(held, dtype)));
    if (s.any_local) in_process_collectives().reduce_scatter(dtype, op, s.group, held, pieces);
  }
  void all_gather(DType dtype, std::span<GroupMember const> group, std::span<Box const> pieces) override {
    if (all_local(group)) return in_process_collectives().all_gather(dtype, group, pieces);
    check(group.size(), pieces.size(), "all_gather", "pieces");
    auto s = stage(group, sizes(pieces, dtype));
    if (s.any_local) in_process_collectives().all_gather(dtype, s.group, pieces);
  }
  void all_to_all(DType dtype, std::span<GroupMember const> group, std::span<Box const> in_boxes,
                  std::span<Box const> out_boxes) override {
    if (all_local(group)) return in_process_collectives().all_to_all(dtype, group, in_boxes, out_boxes);
    check(group.size(), in_boxes.size(), "all_to_all", "in_boxes");
    auto s = stage(group, sizes(in_boxes, dtype));
    if (s.any_local) in_process_collectives().all_to_all(dtype, s.group, in_boxes, out_boxes);
  }
  void collective_permute(DType dtype, std::span<GroupMember const> group, std::span<Box const> in_boxes,
                          std::span<Box const> out_boxes, std::span<PermutePair const> pairs) override {
    if (all_local(group)) return in_process_collectives().collective_permute(dtype, group, in_boxes, out_boxes, pairs);
    check(group.size(), in_boxes.size(), "collective_permute", "in_boxes");
    auto s = stage(group, sizes(in_boxes, dtype));
    if (s.any_local) in_process_collectives().collective_permute(dtype, s.group, in_boxes, out_boxes, pairs);
  }

 private:
  // Checked before any message is sent (the in-process collective checks the rest).
  static void check(std::size_t members, std::size_t boxes, char const* what, char const* name) {
    if (members != boxes)
      throw Error(std::format("{}: {} {} for a group of {} members (one per member)", what, boxes, name, members));
  }
};

}  // namespace

Collectives& collectives() {
  if (distributed::process_count() == 1) return in_process_collectives();
  static AcrossProcesses c;
  return c;
}

}  // namespace tessel
