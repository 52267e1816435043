// Collectives whose members are on several processes (MPI). Each runs over the communicator of
// exactly the processes holding the group's members (made once and cached: communicators.cpp),
// and moves only what a process's outputs need, straight between members' buffers
// (distributed::BoxTransfer; strided boxes as MPI datatypes), so that it costs what the matching
// MPI collective costs:
//  - all-gather: when each process's pieces are one range of the whole (an outer-dimension
//    split), MPI's own all-gather (MPI_Allgather(v) into the first local output);
//    otherwise each member's piece to every other process, received into the first local output
//    at its place. Local pieces are copied in; further local outputs copy the first.
//  - all-to-all: with one member per process and each part one run of both buffers, MPI's own
//    (MPI_Alltoall(v)); otherwise, as collective-permute, each part of an out box from the process
//    holding it, received into the out buffer; local parts copied.
//  - reductions stay deterministic: an element is combined from every member's input in member
//    order, by the in-process code, so a result has the same bits however the devices are spread
//    over processes (MPI's own reductions promise no order). A process receives the parts of the
//    remote members' inputs that its outputs need (a reduce-scatter: its pieces; an all-reduce:
//    its 1 / P chunk, then the combined chunks go round as an all-gather, as a ring all-reduce
//    moves them), into buffers it keeps from call to call.
// Members' buffers and the receive buffers are device memory, which MPI reads and writes in place:
// on a GPU backend that takes a GPU-aware MPI (host staging is not built).
#include <algorithm>
#include <cstring>
#include <format>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <Kokkos_Core.hpp>

#include "tessel/core/error.hpp"
#include "tessel/runtime/backend/devices.hpp"
#include "tessel/runtime/block_copy.hpp"
#include "tessel/runtime/collectives.hpp"
#include "tessel/runtime/stream.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/distributed.hpp"
#include "tessel/runtime/run_plan.hpp"
#include "../distributed/world.hpp"
#include "checks.hpp"
#include "process_group.hpp"

namespace tessel {
namespace {

using distributed::BoxTransfer;
using namespace across;

class AcrossProcesses final : public Collectives {
 public:
  [[nodiscard]] char const* name() const override { return "across processes"; }

  // A reduce-scatter then an all-gather over the group's processes: process c combines chunk c
  // of every member's input, in member order, and sends it to the others. Each process sends
  // 2 (P - 1) / P of a block per device it holds, as a ring all-reduce does.
  void all_reduce(DType dtype, ReduceOp op, std::span<GroupMember const> group, Box const& held) override {
    if (all_local(group)) return in_process_collectives().all_reduce(dtype, op, group, held);
    GroupProcesses const spread("all_reduce", group);
    if (spread.local.empty()) return;  // no member here
    auto const& processes = spread.processes;
    std::size_t const element = size_of(dtype);
    auto const count = held.num_elements();
    auto const parts = static_cast<std::int64_t>(processes.size());
    // The whole block as one run of `count` elements; chunk c of it is process c's to combine.
    Box const flat{{0, count}};
    auto chunk = [&](std::size_t c) {
      auto i = static_cast<std::int64_t>(c);
      return Box{{count * i / parts, count * (i + 1) / parts}};
    };
    std::size_t const mine =
        static_cast<std::size_t>(std::find(processes.begin(), processes.end(), spread.me) - processes.begin());
    Box const own = chunk(mine);
    std::int64_t const begin = own[0].start, length = own[0].size();
    // The result lands in the first local output (or, with none, in a buffer that is dropped).
    GroupMember const* first = spread.first_output(group);
    int const here = group[spread.local[0]].device;
    std::byte* receiving = first ? first->out : scratch(here, group.size(), static_cast<std::size_t>(count) * element);
    fence_members(group);  // the inputs are complete
    // 1. Every member's part of chunk `mine` here; this process's members' other chunks to their owners.
    std::vector<GroupMember> part(group.size());
    {
      BoxTransfer transfer(processes, element, "an all-reduce across processes");
      for (std::size_t k = 0; k < group.size(); ++k) {
        if (process_of(group[k]) == spread.me) {
          for (std::size_t c = 0; c < processes.size(); ++c)
            if (c != mine) transfer.send(processes[c], group[k].in, flat, chunk(c));
          part[k] = GroupMember{group[k].device, group[k].in + static_cast<std::size_t>(begin) * element, nullptr};
        } else {
          std::byte* buffer = scratch(here, k, static_cast<std::size_t>(length) * element);
          transfer.receive(process_of(group[k]), buffer, own, own);
          part[k] = GroupMember{here, buffer, nullptr};
        }
      }
      transfer.wait();
    }
    // 2. Chunk `mine` combined into the receiving buffer, in member order.
    part[spread.local[0]].out = receiving + static_cast<std::size_t>(begin) * element;
    in_process_collectives().all_reduce(dtype, op, part, Box{{0, length}});
    // 3. The combined chunks to every process of the group; then every other local output a copy.
    {
      BoxTransfer transfer(processes, element, "an all-reduce across processes");
      for (std::size_t c = 0; c < processes.size(); ++c)
        if (c != mine) transfer.receive(processes[c], receiving, flat, chunk(c));
      for (std::size_t c = 0; c < processes.size(); ++c)
        if (c != mine) transfer.send(processes[c], receiving, flat, own);
      transfer.wait();
    }
    if (first) copy_to_other_outputs(group, spread, first, flat, element);
  }

  // A process receives, for each of its members' pieces, that piece of every remote member's
  // input (into a buffer laid out as the held box), then combines in process, in member order.
  void reduce_scatter(DType dtype, ReduceOp op, std::span<GroupMember const> group, Box const& held,
                      std::span<Box const> pieces) override {
    if (all_local(group)) return in_process_collectives().reduce_scatter(dtype, op, group, held, pieces);
    char const* what = "reduce_scatter";
    detail::check_count(what, "pieces", pieces.size(), group.size());
    detail::check_ranks(what, "pieces", pieces, held.size());
    for (std::size_t k = 0; k < pieces.size(); ++k)
      if (!detail::inside(pieces[k], held))
        throw Error(std::format("{}: pieces[{}] {} is not inside the reduced box {}", what, k, to_string(pieces[k]),
                                to_string(held)));
    GroupProcesses const spread(what, group);
    if (spread.local.empty()) return;
    std::size_t const element = size_of(dtype);
    int const here = group[spread.local[0]].device;
    fence_members(group);
    // Remote members read from buffers laid out as the held box, of which only the pieces of this
    // process's members are received (and read); the rest is never touched.
    std::vector<GroupMember> staged(group.begin(), group.end());
    for (std::size_t j = 0; j < group.size(); ++j)
      if (process_of(group[j]) != spread.me) staged[j] = GroupMember{here, scratch(here, j, bytes_of(held, element)), nullptr};
    {
      BoxTransfer transfer(spread.processes, element, "a reduce-scatter across processes");
      for (std::size_t j = 0; j < group.size(); ++j) {
        int const from = process_of(group[j]);
        for (std::size_t k = 0; k < group.size(); ++k) {
          int const to = process_of(group[k]);
          if (pieces[k].empty() || from == to) continue;
          if (from == spread.me) transfer.send(to, group[j].in, held, pieces[k]);
          else if (to == spread.me) transfer.receive(from, const_cast<std::byte*>(staged[j].in), held, pieces[k]);
        }
      }
      transfer.wait();
    }
    in_process_collectives().reduce_scatter(dtype, op, staged, held, pieces);
  }

  void all_gather(DType dtype, std::span<GroupMember const> group, std::span<Box const> pieces) override {
    if (all_local(group)) return in_process_collectives().all_gather(dtype, group, pieces);
    char const* what = "all_gather";
    detail::check_count(what, "pieces", pieces.size(), group.size());
    if (group.empty()) return;
    detail::check_ranks(what, "pieces", pieces, pieces[0].size());
    Box const whole = detail::tiled_union(pieces);
    GroupProcesses const spread(what, group);
    if (spread.local.empty() || whole.empty()) return;
    std::size_t const element = size_of(dtype);
    GroupMember const* first = spread.first_output(group);
    // Remote pieces land in the first local output (or, with none, in a buffer that is dropped).
    int const first_device = first ? first->device : group[spread.local[0]].device;
    std::byte* receiving = first ? first->out : scratch(first_device, 0, bytes_of(whole, element));
    std::size_t const written = bytes_of(whole, element) * spread.local.size();
    fence_members(group);
    if (auto ranges = process_ranges(group, pieces, whole, spread.processes)) {
      // Each process's pieces are one range of the whole's elements (a split of the outer
      // dimension, say): MPI's own all-gather, from the one local member's input, or in place
      // after the local pieces are copied in.
      std::byte const* send = spread.local.size() == 1 ? group[spread.local[0]].in : nullptr;
      if (!send)
        for (std::size_t j : spread.local)
          copy_here(first_device, group[j].in, pieces[j], receiving, whole, pieces[j], element, written);
      Kokkos::fence();
      if (distributed::all_gather_ranges(spread.processes, send, receiving, element, ranges->counts, ranges->starts,
                                         "an all-gather across processes")) {
        if (first) copy_to_other_outputs(group, spread, first, whole, element);
        fence_members(group);
        return;
      }
    }
    BoxTransfer transfer(spread.processes, element, "an all-gather across processes");
    for (std::size_t j = 0; j < group.size(); ++j) {
      int const from = process_of(group[j]);
      if (from != spread.me) transfer.receive(from, receiving, whole, pieces[j]);
    }
    for (std::size_t j = 0; j < group.size(); ++j) {
      if (process_of(group[j]) != spread.me) continue;
      for (int q : spread.processes)
        if (q != spread.me) transfer.send(q, group[j].in, pieces[j], pieces[j]);
      copy_here(first_device, group[j].in, pieces[j], receiving, whole, pieces[j], element, written);
    }
    transfer.wait();
    Kokkos::fence();
    if (first) copy_to_other_outputs(group, spread, first, whole, element);
    fence_members(group);
  }

  void all_to_all(DType dtype, std::span<GroupMember const> group, std::span<Box const> in_boxes,
                  std::span<Box const> out_boxes) override {
    if (all_local(group)) return in_process_collectives().all_to_all(dtype, group, in_boxes, out_boxes);
    char const* what = "all_to_all";
    detail::check_count(what, "in_boxes", in_boxes.size(), group.size());
    detail::check_count(what, "out_boxes", out_boxes.size(), group.size());
    if (group.empty()) return;
    detail::check_ranks(what, "in_boxes", in_boxes, in_boxes[0].size());
    detail::check_ranks(what, "out_boxes", out_boxes, in_boxes[0].size());
    for (std::size_t k = 0; k < out_boxes.size(); ++k) detail::check_covered_once(k, in_boxes, out_boxes[k]);
    GroupProcesses const spread(what, group);
    if (spread.local.empty()) return;
    std::size_t const element = size_of(dtype);
    std::size_t out_bytes = 0;
    for (std::size_t k : spread.local) out_bytes += bytes_of(out_boxes[k], element);
    fence_members(group);
    if (all_to_all_by_mpi(group, in_boxes, out_boxes, spread, element)) return fence_members(group);
    BoxTransfer transfer(spread.processes, element, "an all-to-all across processes");
    // Member k's out box from every member j holding part of it (both sides walk k, then j).
    auto each_part = [&](auto&& f) {
      for (std::size_t k = 0; k < group.size(); ++k)
        for (std::size_t j = 0; j < group.size(); ++j) {
          Box part = intersect(out_boxes[k], in_boxes[j]);
          if (!part.empty()) f(k, j, part);
        }
    };
    each_part([&](std::size_t k, std::size_t j, Box const& part) {
      int const from = process_of(group[j]), to = process_of(group[k]);
      if (to == spread.me && from != spread.me)
        transfer.receive(from, out_of(group, k, out_boxes[k], element), out_boxes[k], part);
    });
    each_part([&](std::size_t k, std::size_t j, Box const& part) {
      int const from = process_of(group[j]), to = process_of(group[k]);
      if (from != spread.me) return;
      if (to != spread.me) transfer.send(to, group[j].in, in_boxes[j], part);
      else if (group[k].out)
        copy_here(group[k].device, group[j].in, in_boxes[j], group[k].out, out_boxes[k], part, element, out_bytes);
    });
    transfer.wait();
    fence_members(group);
  }

  void collective_permute(DType dtype, std::span<GroupMember const> group, std::span<Box const> in_boxes,
                          std::span<Box const> out_boxes, std::span<PermutePair const> pairs) override {
    if (all_local(group)) return in_process_collectives().collective_permute(dtype, group, in_boxes, out_boxes, pairs);
    char const* what = "collective_permute";
    detail::check_count(what, "in_boxes", in_boxes.size(), group.size());
    detail::check_count(what, "out_boxes", out_boxes.size(), group.size());
    detail::check_permute_pairs(in_boxes, out_boxes, pairs);
    GroupProcesses const spread(what, group);
    if (spread.local.empty()) return;
    std::size_t const element = size_of(dtype);
    std::size_t out_bytes = 0;
    for (auto [s, t] : pairs)
      if (process_of(group[static_cast<std::size_t>(t)]) == spread.me)
        out_bytes += bytes_of(in_boxes[static_cast<std::size_t>(s)], element);
    fence_members(group);
    // The two buffers of a pair have the same row-major layout, so the source's box stands for both.
    BoxTransfer transfer(spread.processes, element, "a collective-permute across processes");
    for (auto [s, t] : pairs) {
      auto const src = static_cast<std::size_t>(s), dst = static_cast<std::size_t>(t);
      int const from = process_of(group[src]), to = process_of(group[dst]);
      Box const& box = in_boxes[src];
      if (to == spread.me && from != spread.me) transfer.receive(from, out_of(group, dst, box, element), box, box);
    }
    for (auto [s, t] : pairs) {
      auto const src = static_cast<std::size_t>(s), dst = static_cast<std::size_t>(t);
      int const from = process_of(group[src]), to = process_of(group[dst]);
      Box const& box = in_boxes[src];
      if (from != spread.me) continue;
      if (to != spread.me) transfer.send(to, group[src].in, box, box);
      else if (group[dst].out) copy_here(group[dst].device, group[src].in, box, group[dst].out, box, box, element, out_bytes);
    }
    transfer.wait();
    fence_members(group);
  }

 private:
  // MPI's own all-to-all, when every process has one member and each part goes
  // from one contiguous run of its source's buffer to one of its target's: every process decides
  // the same from the same boxes. False when the boxes are not so (the caller moves them itself).
  static bool all_to_all_by_mpi(std::span<GroupMember const> group, std::span<Box const> in_boxes,
                                std::span<Box const> out_boxes, GroupProcesses const& spread, std::size_t element) {
    std::size_t const n = spread.processes.size();
    if (group.size() != n) return false;  // one member per process (the processes are distinct)
    auto rank = [&](std::size_t k) {
      return static_cast<std::size_t>(std::lower_bound(spread.processes.begin(), spread.processes.end(),
                                                       process_of(group[k])) - spread.processes.begin());
    };
    std::size_t const me = spread.local[0];
    std::vector<std::int64_t> send_counts(n), send_starts(n), receive_counts(n), receive_starts(n);
    for (std::size_t k = 0; k < n; ++k)
      for (std::size_t j = 0; j < n; ++j) {
        Box part = intersect(out_boxes[k], in_boxes[j]);
        if (part.empty()) continue;
        detail::RunPlan from = detail::plan_runs(in_boxes[j], in_boxes[j], part);
        detail::RunPlan to = detail::plan_runs(out_boxes[k], out_boxes[k], part);
        if (from.runs != 1 || to.runs != 1) return false;  // strided on one side
        if (j == me) send_counts[rank(k)] = part.num_elements(), send_starts[rank(k)] = from.src_base;
        if (k == me) receive_counts[rank(j)] = part.num_elements(), receive_starts[rank(j)] = to.src_base;
      }
    return distributed::all_to_all_runs(spread.processes, group[me].in, out_of(group, me, out_boxes[me], element),
                                        element, send_counts,
                                        send_starts, receive_counts, receive_starts, "an all-to-all across processes");
  }

  // Member k's output, or (for a local member without one) a buffer whose contents are dropped.
  static std::byte* out_of(std::span<GroupMember const> group, std::size_t k, Box const& box, std::size_t element) {
    return group[k].out ? group[k].out : scratch(group[k].device, k, bytes_of(box, element));
  }

  // Every local output other than `first` a copy of it (all hold `box`).
  static void copy_to_other_outputs(std::span<GroupMember const> group, GroupProcesses const& spread, GroupMember const* first,
                                    Box const& box, std::size_t element) {
    std::size_t const written = bytes_of(box, element) * spread.local.size();
    for (std::size_t k : spread.local)
      if (group[k].out && &group[k] != first)
        copy_here(group[k].device, first->out, box, group[k].out, box, box, element, written);
    Kokkos::fence();
  }
};

}  // namespace

Collectives& collectives() {
  if (distributed::process_count() == 1) return in_process_collectives();
  static AcrossProcesses c;
  return c;
}

}  // namespace tessel
