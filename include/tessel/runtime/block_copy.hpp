#pragma once
// The one primitive every data movement is made of: copy boxes of the global index space between
// row-major buffers that hold (possibly different) boxes of it. A CopyBatch runs many such copies
// as one kernel (a collective's, for every member); copy_region is a batch of one.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tessel/core/box.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/run_plan.hpp"

namespace tessel::detail {

// Box copies enqueued together. Each source region goes to one or more destinations that share one
// layout. Work items follow the copy shape of the execution space that runs them, chosen by its
// type (backend/copy_shape.hpp): a host thread copies a chunk (several short runs at a time), a GPU
// thread one element; so a GPU build's batch of host buffers, run on the host's space, takes the
// host's shape.
class CopyBatch {
 public:
  // One source region copied to `num_dst` destinations that share one layout; cut into work items
  // when it is launched, for the space that runs it.
  struct Task {
    RunPlan plan;
    std::byte const* src;
    int first_dst, num_dst;
    std::int64_t chunk = 0;          // elements a work item copies of a long run
    std::int64_t chunks = 0;         // work items per run (long runs), or 1
    std::int64_t runs_per_item = 0;  // runs per work item (short runs), or 1
    std::int64_t first_item = 0;     // work items of the tasks before this one
  };

  // Copies `region` (global coordinates, inside both boxes) from src, which holds src_box, into
  // every buffer of `dsts`, each holding dst_box.
  void add(std::byte const* src, Box const& src_box, Box const& dst_box, Box const& region,
           std::span<std::byte* const> dsts);
  // Enqueues the copies on device d, which must be able to read and write every buffer, and starts
  // a new batch (the queued work holds the tables). In d's order (runtime/stream.hpp): whoever
  // reads a destination elsewhere waits for d first. Moves bits as unsigned words of the element
  // size (1, 2, 4, 8).
  void launch(Device const& d, std::size_t element_size);
  // Runs the copies now, on the host's execution space, for host buffers (packing before a
  // host-to-device copy), and starts a new batch.
  void run(HostExecSpace const& host, std::size_t element_size);

  // When the batch is part of a larger operation: the bytes that operation writes, which decide
  // whether the copies write around the caches (backend::streams); by default, the batch's own.
  void set_operation_bytes(std::size_t bytes) { operation_bytes_ = bytes; }

  [[nodiscard]] std::span<Task const> tasks() const { return tasks_; }
  [[nodiscard]] std::span<std::byte* const> destinations() const { return dsts_; }
  [[nodiscard]] std::size_t operation_bytes() const { return operation_bytes_; }
  void clear();

 private:
  std::vector<Task> tasks_;
  std::vector<std::byte*> dsts_;
  std::size_t operation_bytes_ = 0;
};

// Copies `region` (global coordinates, inside both src_box and dst_box) from src, which holds
// src_box, into dst, which holds dst_box. Runs on device d, which must be able to read and write
// both buffers. In d's order, as CopyBatch::launch.
void copy_region(Device const& d, std::byte const* src, Box const& src_box, std::byte* dst, Box const& dst_box,
                 Box const& region, std::size_t element_size);
// Copies `n` bytes from src to dst (device memory, not overlapping), on device d (in its order).
void copy_bytes(Device const& d, std::byte* dst, std::byte const* src, std::size_t n);
// Sets `n` bytes at dst, on device d (in its order, as copy_region).
void fill_bytes(Device const& d, std::byte* dst, std::size_t n, std::byte value);
// The same, run now on the host's execution space, for host buffers (packing before a host-to-GPU copy).
void copy_region(HostExecSpace const& host, std::byte const* src, Box const& src_box, std::byte* dst, Box const& dst_box,
                 Box const& region, std::size_t element_size);

}  // namespace tessel::detail
