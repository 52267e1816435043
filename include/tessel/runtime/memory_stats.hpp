#pragma once
// What each device holds, measured: the bytes of its shards and temporaries in use now and their
// high-water mark, as JAX's Device.memory_stats() reports bytes_in_use and peak_bytes_in_use.
// Counted by the buffer pool in the blocks it hands out (core/buffer_bytes.hpp: shards at aligned
// offsets, the pool's rounding charged to a block's first device); what the pool keeps in its free
// lists is not in use. The memory analysis (plan/memory_analysis.hpp) predicts the same numbers.
// Beside them, the copies of GEMM operands the backend keeps laid out for its BLAS (host GEMMs by
// oneDNN keep each weight they read twice packed: docs/backends.md), which no plan predicts: they
// are made at run time, and live as long as the tensors they were read from.
#include <cstdint>

namespace tessel {

struct DeviceMemoryStats {
  std::int64_t bytes_in_use = 0;
  std::int64_t peak_bytes_in_use = 0;  // since the start, or since reset_peak_memory_stats()
  // Packed copies of operands this device's GEMMs read (weights), not in the counts above: a
  // model whose weights are kept packed holds them twice (TESSEL_PACKED_OPERANDS_MB caps them).
  std::int64_t kept_operand_bytes = 0;
};

// One of this process's devices (a global id).
DeviceMemoryStats memory_stats(int device);
// Every device's peak becomes what it holds now: the next peak is of what runs after.
void reset_peak_memory_stats();

}  // namespace tessel
