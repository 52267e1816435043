#pragma once
// Collectives between the devices of a group. One interface, several implementations, each in
// src/runtime/collectives/: in-process (logical devices of one process, over Kokkos kernels) and
// across processes (MPI: members on several processes). The planner decides which collective
// runs; this layer only moves and combines.
//
// Every buffer is row-major over a box of the global index space (the box it "holds"), with
// elements of `dtype`. A member's `out` must not overlap any member's `in` or another member's
// `out`. A collective is ordered on its members' devices (runtime/stream.hpp): it starts after
// the work queued on every member's device, and every member's later work starts after it; the
// host fences the members' devices before it reads an `out` or frees a buffer (in-process: the
// call returns before the work is done where device work is asynchronous; across processes it
// returns when MPI has moved the data). It checks its arguments before it touches any buffer: a
// bad call throws tessel::Error and writes nothing. Members are numbered by their place in `group` (device_groups() forms groups over
// mesh axes in the order collectives expect).
#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "tessel/core/box.hpp"
#include "tessel/core/dtype.hpp"
#include "tessel/core/reduce_op.hpp"

namespace tessel {

// One member of a group: its device, the buffer it contributes and the buffer it receives. A
// member on another process (runtime/distributed.hpp) has null buffers; a null `out` receives
// nothing.
struct GroupMember {
  int device;
  std::byte const* in;
  std::byte* out;
};

// (source member, target member) of a collective_permute.
using PermutePair = std::pair<int, int>;

class Collectives {
 public:
  virtual ~Collectives() = default;
  [[nodiscard]] virtual char const* name() const = 0;
  // Every member's `in` holds the same box `held` (row-major); afterwards every member's `out`
  // (same box) holds the elementwise reduction of all members' `in`, combined in member order.
  virtual void all_reduce(DType dtype, ReduceOp op, std::span<GroupMember const> group, Box const& held) = 0;
  // As all_reduce, but member k receives only the box pieces[k] (inside `held`) of the result, in
  // its `out` laid out row-major over pieces[k].
  virtual void reduce_scatter(DType dtype, ReduceOp op, std::span<GroupMember const> group, Box const& held,
                              std::span<Box const> pieces) = 0;
  // Member k's `in` holds box pieces[k]; the pieces must tile their bounding box (the union:
  // pairwise disjoint, covering it; empty pieces are allowed). Afterwards every member's `out`
  // holds that union box. (XLA's all-gather, stated on boxes.)
  virtual void all_gather(DType dtype, std::span<GroupMember const> group, std::span<Box const> pieces) = 0;
  // Member k's `in` holds in_boxes[k] and its `out` receives out_boxes[k], assembled from every
  // member's `in` (the part of out_boxes[k] inside in_boxes[j] comes from member j). Every element
  // of every out box must lie in exactly one in box. (XLA's all-to-all, which splits one dimension
  // and concatenates another, is the case where the in boxes and the out boxes each tile the same
  // box; out boxes may also overlap, or repeat, or be partial.)
  virtual void all_to_all(DType dtype, std::span<GroupMember const> group, std::span<Box const> in_boxes,
                          std::span<Box const> out_boxes) = 0;
  // For each pair (s, t): member t's `out` (holding out_boxes[t]) receives member s's `in`
  // (holding in_boxes[s]), element for element; the two boxes must have the same extent (they
  // may be at different places of the index space: a shift). A member may be the source of
  // several pairs but the target of at most one; members that are no target get nothing written.
  // (XLA's collective-permute.)
  virtual void collective_permute(DType dtype, std::span<GroupMember const> group, std::span<Box const> in_boxes,
                                  std::span<Box const> out_boxes, std::span<PermutePair const> pairs) = 0;
};

// Logical devices of this process.
Collectives& in_process_collectives();
// Any group: members of several processes go over MPI (each process calls the collective with the
// same group and boxes, its own members' buffers set), members of this process alone in process.
Collectives& collectives();

}  // namespace tessel
