#pragma once
// The buffers each value takes, for the memory analysis (plan/memory_analysis.hpp declares
// value_memory; plan/detail/memory_walk.hpp walks a plan with them): which positions share a
// buffer (owners) and what the pool allocates per unit (core/buffer_bytes.hpp's blocks).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tessel/core/buffer_bytes.hpp"
#include "tessel/plan/memory_types.hpp"
#include "tessel/plan/plan.hpp"

namespace tessel::plan {

namespace detail {

// A number as text, in a constant expression too (std::format is not constexpr).
constexpr std::string decimal(std::int64_t v) {
  if (v == 0) return "0";
  std::string s;
  bool const negative = v < 0;
  std::uint64_t u = negative ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  while (u > 0) {
    s.insert(s.begin(), static_cast<char>('0' + u % 10));
    u /= 10;
  }
  return negative ? "-" + s : s;
}

// For each position, the position whose buffer it uses (itself when it owns one): the first
// position of the same unit with the same block, among those `may_share` allows.
template <class MayShare>
constexpr std::vector<std::size_t> owners(Shape const& shape, NamedSharding const& sharding, MemoryLayout const& layout,
                                MayShare const& may_share) {
  Mesh const& mesh = sharding.mesh();
  auto const n = static_cast<std::size_t>(mesh.num_devices());
  std::vector<std::size_t> owner(n);
  std::vector<Box> boxes;
  boxes.reserve(n);
  for (std::size_t p = 0; p < n; ++p) boxes.push_back(sharding.layout().box(shape, static_cast<int>(p)));
  for (std::size_t p = 0; p < n; ++p) {
    owner[p] = p;
    int const unit = layout.unit_of(mesh.device_id(static_cast<int>(p)));
    for (std::size_t q = 0; q < p; ++q)
      if (owner[q] == q && boxes[q] == boxes[p] && layout.unit_of(mesh.device_id(static_cast<int>(q))) == unit &&
          may_share(q, p)) {
        owner[p] = q;
        break;
      }
  }
  return owner;
}

// What the pool allocates for a tensor whose positions use their owners' buffers
// (core/buffer_bytes.hpp): per unit, one block of the owners' aligned shards, rounded.
constexpr ValueMemory memory_with_owners(Shape const& shape, int dtype_bytes, NamedSharding const& sharding,
                               MemoryLayout const& layout, std::vector<std::size_t> const& owner,
                               std::int64_t buffer_base) {
  Mesh const& mesh = sharding.mesh();
  auto const positions = static_cast<std::size_t>(mesh.num_devices());
  ValueMemory m;
  int top = 0;
  for (std::size_t p = 0; p < positions; ++p) top = std::max(top, mesh.device_id(static_cast<int>(p)));
  m.bytes.assign(static_cast<std::size_t>(top) + 1, 0);
  m.buffer.resize(positions);
  struct Block {
    int unit;
    int first;  // its first owner's device
    std::size_t total = 0;
  };
  std::vector<Block> blocks;
  for (std::size_t p = 0; p < positions; ++p) {
    int const id = mesh.device_id(static_cast<int>(p));
    m.buffer[p] = buffer_base + static_cast<std::int64_t>(owner[p]);
    if (owner[p] != p) continue;
    auto const bytes = static_cast<std::size_t>(sharding.shard_shape(shape, static_cast<int>(p)).num_elements()) *
                       static_cast<std::size_t>(dtype_bytes);
    std::size_t const aligned = aligned_shard_bytes(bytes);
    int const unit = layout.unit_of(id);
    auto b = std::find_if(blocks.begin(), blocks.end(), [&](Block const& x) { return x.unit == unit; });
    if (b == blocks.end()) b = blocks.insert(blocks.end(), Block{unit, id});
    b->total += aligned;
    m.bytes[static_cast<std::size_t>(id)] += static_cast<std::int64_t>(aligned);
  }
  for (Block const& b : blocks)
    m.bytes[static_cast<std::size_t>(b.first)] += static_cast<std::int64_t>(pool_block_bytes(b.total) - b.total);
  return m;
}

}  // namespace detail

constexpr ValueMemory value_memory(Shape const& shape, int dtype_bytes, NamedSharding const& sharding,
                         MemoryLayout const& layout, bool replicas_share) {
  using namespace detail;
  auto owner = owners(shape, sharding, layout, [&](std::size_t, std::size_t) { return replicas_share; });
  return memory_with_owners(shape, dtype_bytes, sharding, layout, owner, 0);
}

constexpr ValueMemory value_memory(Shape const& shape, int dtype_bytes, NamedSharding const& sharding,
                         MemoryLayout const& layout, std::vector<std::size_t> const& owner) {
  using namespace detail;
  return memory_with_owners(shape, dtype_bytes, sharding, layout, owner, 0);
}

}  // namespace tessel::plan
