#pragma once
// The type-erased body of a sharded tensor: global shape, dtype, sharding and one buffer per mesh
// position. Everything that moves bytes (placing, resharding, gathering) works on this in src/, so
// the templates users instantiate stay thin.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "tessel/core/box.hpp"
#include "tessel/core/dtype.hpp"
#include "tessel/core/named_sharding.hpp"
#include "tessel/runtime/device.hpp"

namespace tessel::detail {

using ByteView = Kokkos::View<std::byte*, MemSpace, Kokkos::MemoryUnmanaged>;

// One mesh position's block. Another process's block (runtime/distributed.hpp) is known by its
// device and box only: no memory here, `addressable` false.
struct ShardBuffer {
  int device;                          // global device id
  Box index;                           // the global index range held, row-major inside `bytes`
  ByteView bytes;                      // index.num_elements() * size_of(dtype) bytes (none when empty)
  std::shared_ptr<std::byte> memory;   // owns `bytes` (pooled); may be a replica's (see below)
  bool addressable = true;             // on one of this process's devices
};
// Replicas whose devices share memory (shares_memory) may share one buffer: a value is computed
// once per distinct buffer (devices on one host's cores gain nothing from computing it N times).
// So nothing writes into a tensor's shards once the step that made it has ended, and a step
// that writes a tensor it made in place visits each buffer once (TensorImpl::owns_buffer).

// Region copies between a shard of this process and host memory (`host` holds `host_box`), through
// a host mirror of the shard: the shard itself where devices use host memory, a staging copy of the
// whole shard otherwise. They return when the copy is done.
void shard_to_host(ShardBuffer const& shard, Box const& region, std::byte* host, Box const& host_box,
                   std::size_t element);
void host_to_shard(std::byte const* host, Box const& host_box, ShardBuffer const& shard, Box const& region,
                   std::size_t element);

struct TensorImpl {
  Shape shape;
  DType dtype;
  NamedSharding sharding;
  std::vector<ShardBuffer> shards;  // one per mesh position, in mesh order (see ShardBuffer)
  // Inside shard_map (runtime/shard_map.hpp) a per-device value is a tensor of the local shape,
  // replicated on the mesh, whose replicas differ: bit a set when they may differ along mesh
  // axis a. 0 for every ordinary tensor (its replicas are equal).
  std::uint32_t varying = 0;

  // Shards with uninitialized memory; fails (before allocating) when the sharding cannot tile shape.
  // With `owner` (one entry per mesh position, owner[p] <= p), shard p shares shard owner[p]'s
  // buffer where owner[p] != p: the caller promises they hold the same box and equal values, on
  // devices that share memory (replica_owners gives such a list).
  static std::shared_ptr<TensorImpl> allocate(Shape const& shape, DType dtype, NamedSharding const& sharding,
                                              std::span<std::size_t const> owner = {});
  // The shape of the shard at mesh position `pos`: the sharding's block, shorter or empty where an
  // uneven dimension ends (ShardLayout::box).
  [[nodiscard]] Shape shard_shape(std::size_t pos) const { return shards[pos].index.extent(); }
  // Whether this process holds every shard (jax.Array.is_fully_addressable).
  [[nodiscard]] bool fully_addressable() const;
  // Whether shard `pos` holds its own buffer: no earlier shard shares it.
  [[nodiscard]] bool owns_buffer(std::size_t pos) const;
};

// For each mesh position of `sharding` over `shape`, the first position holding the same box on a
// device that shares memory with it (itself when there is none): the replicas that may share one
// buffer when they hold equal values (TensorImpl::allocate).
std::vector<std::size_t> replica_owners(Shape const& shape, NamedSharding const& sharding);

// The same shards, marked as differing along the mesh axes in `varying` (TensorImpl::varying).
std::shared_ptr<TensorImpl const> with_varying(std::shared_ptr<TensorImpl const> t, std::uint32_t varying);

// After a step queued its writes into t's buffers, each on the device of the first shard holding
// the buffer: the devices of the replicas that share those buffers wait for the writers
// (runtime/stream.hpp's rule, that a step leaves every device ordered after the writes to the
// shards it holds).
void wait_for_buffer_writers(TensorImpl const& t);

// The host waits for the devices holding t's shards: before it reads them, or writes memory a new
// tensor took from the pool (whose waits for its last users are queued on those devices).
void fence_holders(TensorImpl const& t);

// The mesh positions of t's shards this process holds, in order: what every per-device loop walks.
std::vector<std::size_t> local_positions(TensorImpl const& t);

// Host data as the user passed it: element type known only at run time, so a mismatch with the
// requested dtype is a clear error rather than a reinterpretation.
struct HostBytes {
  void const* data;
  std::size_t count;
  DType dtype;
};

std::shared_ptr<TensorImpl> place(HostBytes host, Shape const& shape, DType dtype, NamedSharding const& sharding);
// As place, but `host` holds only the bounding box of this process's shards (local_box).
std::shared_ptr<TensorImpl> place_process_local(HostBytes host, Shape const& shape, DType dtype,
                                                NamedSharding const& sharding);
// The bounding box of the blocks this process's devices hold (none when it holds none).
std::optional<Box> local_box(TensorImpl const& t);
std::shared_ptr<TensorImpl> reshard(TensorImpl const& source, NamedSharding const& target);
void copy_to_host(TensorImpl const& source, void* out, std::size_t count, DType dtype);
// Calls fill(index, host_block) once per distinct shard (replicas are copied device to device).
std::shared_ptr<TensorImpl> from_callback(Shape const& shape, DType dtype, NamedSharding const& sharding,
                                          std::function<void(Box const&, void*)> const& fill);

}  // namespace tessel::detail
