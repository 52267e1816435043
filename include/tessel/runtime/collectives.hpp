#pragma once
// Collectives between the devices of a group. One interface, several implementations: in-process
// (logical devices of one process, over Kokkos kernels; here) and MPI (one process per device or
// host; to come). The planner decides which collective runs; this layer only moves and combines.
#include <cstddef>
#include <span>

#include "tessel/core/box.hpp"
#include "tessel/core/dtype.hpp"

namespace tessel {

enum class ReduceOp : std::uint8_t { sum, prod, max, min };

// One member of a group: its device, the buffer it contributes and the buffer it receives.
struct GroupMember {
  int device;
  std::byte const* in;
  std::byte* out;
};

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
};

// Logical devices of this process.
Collectives& in_process_collectives();

}  // namespace tessel
