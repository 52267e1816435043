#pragma once
// How much memory a tensor's shards take: the one rule the buffer pool allocates by and the memory
// analysis (plan/memory_analysis.hpp) predicts with. A tensor's shards on one unit (one host, or one
// GPU split into logical devices) are one block of the pool, each shard at an offset aligned as
// Kokkos aligns; the block is rounded up as the pool rounds sizes, so that tensors of nearly equal
// size share its free lists. Each device is charged its shards' aligned bytes, and the block's
// first device the rounding too.
#include <cstddef>
#include <cstdint>

namespace tessel {

inline constexpr std::size_t shard_alignment = 256;

constexpr std::size_t aligned_shard_bytes(std::size_t bytes) {
  return (bytes + shard_alignment - 1) / shard_alignment * shard_alignment;
}

// To 256 B below 1 MiB, to whole MiB above (an empty block takes 256 B).
constexpr std::size_t pool_block_bytes(std::size_t bytes) {
  constexpr std::size_t mib = std::size_t{1} << 20;
  if (bytes == 0) bytes = 1;
  if (bytes < mib) return (bytes + 255) / 256 * 256;
  return (bytes + mib - 1) / mib * mib;
}

// What one device of a block is charged.
struct MemoryCharge {  // (no member initializers: lists of them are left uninitialized past their end)
  int device;
  std::size_t bytes;
};

// A reduction with fewer outputs than this per device sums each output's rows in at most
// reduce_runs runs, fixed by the shape alone (runtime/region_launch.hpp), into a scratch buffer of
// outputs x runs accumulators while it runs (which the memory analysis counts).
inline constexpr std::int64_t reduce_scratch_outputs = 64;
inline constexpr std::int64_t reduce_runs = 256;

// Sizes in binary units: 80_GiB, 512_MiB, 64_KiB.
inline namespace literals {
constexpr std::int64_t operator""_KiB(unsigned long long n) { return static_cast<std::int64_t>(n) << 10; }
constexpr std::int64_t operator""_MiB(unsigned long long n) { return static_cast<std::int64_t>(n) << 20; }
constexpr std::int64_t operator""_GiB(unsigned long long n) { return static_cast<std::int64_t>(n) << 30; }
}  // namespace literals

}  // namespace tessel
