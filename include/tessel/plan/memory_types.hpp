#pragma once
// What the memory analysis (plan/memory_analysis.hpp) reports and takes: where the runtime puts
// devices (MemoryLayout), a value's buffers (ValueMemory), and each device's and the plan's totals.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessel/core/named_sharding.hpp"

namespace tessel::plan {

// Where the runtime puts devices: the unit (one host, or one GPU) of each device id. Devices of
// one unit allocate a tensor's shards in one block and may share replicas' buffers. Ids past the
// list are a unit each.
struct MemoryLayout {
  std::vector<int> unit;
  // Whether the devices multiply 16-bit operands as they are (runtime/backend/gemm_batch.hpp:
  // runs_16bit_gemms); where not, a GEMM widens each operand's block into a float32 copy first.
  bool bfloat16_gemm = true, float16_gemm = true;
  [[nodiscard]] constexpr int unit_of(int device) const {
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
  [[nodiscard]] constexpr DeviceMemory const* of(int id) const {
    for (auto const& d : devices)
      if (d.device == id) return &d;
    return nullptr;
  }
};

}  // namespace tessel::plan
