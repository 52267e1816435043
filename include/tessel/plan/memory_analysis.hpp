#pragma once
// memory_analysis: how many bytes each device holds while a plan runs, as JAX's
// compiled.memory_analysis() says it of a compiled program: its arguments, its outputs, what it
// makes in between, and the peak of what is live at once over the instruction list in the order
// the executor runs it. Followed the way the executor fills and drops its value slots: a step's
// result lives until the plan ends (or until the step that overwrites its slot, as a reduction's
// collective does its partial results), a view holds no memory of its own, replicas of one unit
// that share a buffer (an all-reduce's result, a replicated argument, a region computed once per
// replica: runtime/shared_buffers.hpp) hold it once, uneven blocks are counted per device, and
// every buffer is counted as the pool allocates it (core/buffer_bytes.hpp). What the runtime
// measures (runtime/memory_stats.hpp) is checked against it in tests.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessel/plan/plan.hpp"

namespace tessel::plan {

// Where the runtime puts devices: the unit (one host, or one GPU) of each device id. Devices of
// one unit allocate a tensor's shards in one block and may share replicas' buffers. Ids past the
// list are a unit each.
struct MemoryLayout {
  std::vector<int> unit;
  [[nodiscard]] int unit_of(int device) const {
    auto const d = static_cast<std::size_t>(device);
    return d < unit.size() ? unit[d] : -1 - device;
  }
};

// A value's memory: for each position of its mesh, the buffer its block lies in (positions with
// equal ids share one), and what each device holds of it (by device id).
struct ValueMemory {
  std::vector<std::int64_t> buffer;
  std::vector<std::int64_t> bytes;  // by device id
};

// The memory a tensor of `shape` and `dtype_bytes` takes with `sharding`; replicas on one unit
// share their buffer when `replicas_share` (device_put's and an all-reduce's results do).
ValueMemory value_memory(Shape const& shape, int dtype_bytes, NamedSharding const& sharding,
                         MemoryLayout const& layout, bool replicas_share);
// ... where position p uses position owner[p]'s buffer (itself: its own).
ValueMemory value_memory(Shape const& shape, int dtype_bytes, NamedSharding const& sharding,
                         MemoryLayout const& layout, std::vector<std::size_t> const& owner);

struct DeviceMemory {
  int device = -1;
  std::int64_t argument_bytes = 0;   // the plan's tensor inputs, as held when it starts
  std::int64_t output_bytes = 0;     // its result (0 when the result is an input, or a view of one)
  std::int64_t temporary_bytes = 0;  // the most made by the steps and not the result, live at once
  std::int64_t peak_bytes = 0;       // the most live at once, arguments included
  int peak_step = -1;                // the step after which it is reached (-1: before any)
};

struct LiveBuffer {
  std::string what;  // the step that made it ("#3 tessel::gemm[dot_general#4]") or "argument N"
  std::int64_t bytes = 0;
};

struct MemoryAnalysis {
  std::vector<DeviceMemory> devices;  // every device of the plan's meshes, by id
  int device = -1;                    // the device with the largest peak (the one that fails first)
  std::int64_t peak_bytes = 0;
  int peak_step = -1;
  std::vector<LiveBuffer> largest_live;  // on that device at its peak, largest first (at most 5)
  std::string peak_label;                // the step where it is reached ("#3 tessel::gemm[...]"; "" before any)
  ValueMemory result;                    // the result's memory
  int result_input = -1;                 // the tensor node whose memory the result is (-1: its own)
  [[nodiscard]] std::int64_t peak_bytes_per_device() const { return peak_bytes; }
  [[nodiscard]] DeviceMemory const* of(int id) const {
    for (auto const& d : devices)
      if (d.device == id) return &d;
    return nullptr;
  }
};

// The analysis of one plan. `arguments[node]`, where given, is a tensor input's memory as it is
// held (runtime: measured from the tensor); otherwise a tensor input is taken as device_put makes it.
MemoryAnalysis memory_analysis(Plan const& plan, MemoryLayout const& layout,
                               std::span<std::optional<ValueMemory> const> arguments = {});

// explain's section: "memory, per device: ..." (a line, then the largest buffers at the peak).
std::string memory_analysis_text(MemoryAnalysis const& m, std::string_view indent = "");

}  // namespace tessel::plan
