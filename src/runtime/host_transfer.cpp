// Moving a tensor's blocks between the host and its devices: placing host data (device_put,
// make_array_from_process_local_data, make_array_from_callback) and reading it back (to_host,
// copy_to_host). Each distinct block moves once; replicas are copied device to device.
#include "tessel/runtime/tensor_impl.hpp"

#include <algorithm>
#include <format>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/runtime/backend/devices.hpp"
#include "tessel/runtime/block_copy.hpp"
#include "tessel/runtime/distributed.hpp"
#include "tessel/runtime/replay_hooks.hpp"
#include "tessel/runtime/stream.hpp"
#include "replicas.hpp"

namespace tessel::detail {

namespace {

void check_host_data(char const* what, HostBytes const& host, Shape const& shape, DType dtype) {
  if (host.dtype != dtype)
    throw Error(std::format("{}: host data is {} but the tensor is {}", what, name(host.dtype), name(dtype)));
  if (static_cast<std::int64_t>(host.count) != shape.num_elements())
    throw Error(std::format("{}: host data has {} elements but shape {} needs {}", what, host.count, to_string(shape),
                            shape.num_elements()));
}


}  // namespace

void shard_to_host(ShardBuffer const& shard, Box const& region, std::byte* host, Box const& host_box,
                   std::size_t element) {
  if (region.empty()) return;
  fence_device(device(shard.device));  // the shard's writers
  auto mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), shard.bytes);
  copy_region(HostExecSpace(), mirror.data(), shard.index, host, host_box, region, element);
  HostExecSpace().fence();
}

void host_to_shard(std::byte const* host, Box const& host_box, ShardBuffer const& shard, Box const& region,
                   std::size_t element) {
  if (region.empty()) return;
  Device const& holder = device(shard.device);
  auto const& exec = holder.exec;
  fence_device(holder);  // the shard's readers and writers (a new shard's: the pool's waits for its last users)
  auto mirror = Kokkos::create_mirror_view(Kokkos::WithoutInitializing, Kokkos::HostSpace(), shard.bytes);
  if (!(region == shard.index)) Kokkos::deep_copy(mirror, shard.bytes);  // the rest of the shard stays
  copy_region(HostExecSpace(), host, host_box, mirror.data(), shard.index, region, element);
  HostExecSpace().fence();
  if (mirror.data() != shard.bytes.data()) {
    Kokkos::deep_copy(exec, shard.bytes, mirror);
    fence_device(holder);  // the mirror dies on return
  }
}

namespace {
// A shard's bytes as the host reads them: the shard itself where the host can, else a copy.
using HostMirror = decltype(Kokkos::create_mirror_view(Kokkos::WithoutInitializing, Kokkos::HostSpace(),
                                                       std::declval<ByteView const&>()));
using StagedBlocks = std::vector<std::pair<ShardBuffer const*, HostMirror>>;

// A host mirror (uninitialized) of each distinct non-empty block this process holds, `first` as
// first_holders gives it; on host backends each mirror is its shard.
StagedBlocks host_mirrors(TensorImpl const& t, std::vector<std::size_t> const& first) {
  StagedBlocks staged;
  for (std::size_t i = 0; i < t.shards.size(); ++i) {
    auto const& s = t.shards[i];
    if (first[i] != i || !s.addressable || s.index.empty()) continue;
    (void)device(s.device);  // (after the runtime ended: its error, before any fence)
    staged.emplace_back(&s, Kokkos::create_mirror_view(Kokkos::WithoutInitializing, Kokkos::HostSpace(), s.bytes));
  }
  return staged;
}

// Fills this process's shards of a new tensor from host data laid out row-major over `box`:
// each distinct block once, then its replicas device to device. Every block is packed by one host
// batch, and staged blocks go to their devices together: one wait for all, not one per shard.
void fill_from_host(TensorImpl& t, std::byte const* src, Box const& box) {
  auto first = first_holders(t, true);
  std::size_t const element = size_of(t.dtype);
  StagedBlocks const staged = host_mirrors(t, first);
  CopyBatch pack;
  for (auto const& [s, mirror] : staged) {
    std::byte* dsts[] = {mirror.data()};
    pack.add(src, box, s->index, s->index, dsts);
  }
  fence_holders(t);  // (a new tensor's memory may be a freed one's that queued work still reads)
  pack.run(HostExecSpace(), element);
  HostExecSpace().fence();
  bool copied = false;
  for (auto const& [s, mirror] : staged)
    if (mirror.data() != s->bytes.data()) {
      Kokkos::deep_copy(device(s->device).exec, s->bytes, mirror);
      copied = true;
    }
  if (copied) fence_holders(t);  // (the mirrors end on return)
  copy_replicas(t, first);
}
}  // namespace

std::shared_ptr<TensorImpl> place(HostBytes host, Shape const& shape, DType dtype, NamedSharding const& sharding) {
  check_host_data("device_put", host, shape, dtype);
  not_replayable("device_put of host data");
  auto t = TensorImpl::allocate(shape, dtype, sharding, replica_owners(shape, sharding));
  fill_from_host(*t, static_cast<std::byte const*>(host.data), Box::whole(shape));
  return t;
}

std::optional<Box> local_box(TensorImpl const& t) {
  std::optional<Box> box;
  for (auto const& s : t.shards) {
    if (!s.addressable) continue;
    if (!box) {
      box = s.index;
      continue;
    }
    for (std::size_t d = 0; d < box->size(); ++d) {
      (*box)[d].start = std::min((*box)[d].start, s.index[d].start);
      (*box)[d].stop = std::max((*box)[d].stop, s.index[d].stop);
    }
  }
  return box;
}

std::shared_ptr<TensorImpl> place_process_local(HostBytes host, Shape const& shape, DType dtype,
                                                NamedSharding const& sharding) {
  if (host.dtype != dtype)
    throw Error(std::format("make_array_from_process_local_data: host data is {} but the tensor is {}",
                            name(host.dtype), name(dtype)));
  not_replayable("make_array_from_process_local_data");
  auto t = TensorImpl::allocate(shape, dtype, sharding, replica_owners(shape, sharding));
  std::optional<Box> const held = local_box(*t);
  Box const box = held.value_or(Box{});
  std::int64_t const want = held ? box.num_elements() : 0;
  if (static_cast<std::int64_t>(host.count) != want)
    throw Error(std::format("make_array_from_process_local_data: process {} holds the box {} of the {} array of shape "
                            "{} sharded {} ({} elements), but its local data has {} elements",
                            distributed::process_index(), held ? to_string(box) : "(none)", name(dtype),
                            to_string(shape), to_string(sharding), want, host.count));
  fill_from_host(*t, static_cast<std::byte const*>(host.data), box);
  return t;
}

void copy_to_host(TensorImpl const& source, void* out, std::size_t count, DType dtype) {
  not_replayable("a read to the host (to_host)");
  check_host_data("copy_to_host", HostBytes{out, count, dtype}, source.shape, source.dtype);
  if (source.varying)
    throw Error(std::format("to_host: inside shard_map this {} tensor is one block per device, differing along mesh "
                            "axes {}; return it from the body (out_specs) to read it whole",
                            to_string(source.shape), varying_text(source.sharding.mesh().axes(), source.varying)));
  if (!source.fully_addressable())
    throw Error(std::format("to_host: the {} tensor of shape {} sharded {} is not fully addressable: process {} holds "
                            "{} of its {} shards; use tessel::process_allgather(tensor) to bring it to every process",
                            name(source.dtype), to_string(source.shape), to_string(source.sharding),
                            distributed::process_index(), local_positions(source).size(), source.shards.size()));
  // Every distinct block staged to the host together (one wait for all), then placed by one host batch.
  auto first = first_holders(source);
  Box const whole = Box::whole(source.shape);
  std::byte* dsts[] = {static_cast<std::byte*>(out)};
  StagedBlocks const staged = host_mirrors(source, first);
  CopyBatch unpack;
  for (auto const& [s, mirror] : staged) unpack.add(mirror.data(), s->index, whole, s->index, dsts);
  fence_holders(source);  // the shards' writers
  bool copied = false;
  for (auto const& [s, mirror] : staged)
    if (mirror.data() != s->bytes.data()) {
      Kokkos::deep_copy(device(s->device).exec, mirror, s->bytes);
      copied = true;
    }
  if (copied) fence_holders(source);  // the staging copies
  unpack.run(HostExecSpace(), size_of(dtype));
  HostExecSpace().fence();
}

std::shared_ptr<TensorImpl> from_callback(Shape const& shape, DType dtype, NamedSharding const& sharding,
                                          std::function<void(Box const&, void*)> const& fill) {
  not_replayable("make_array_from_callback");
  auto t = TensorImpl::allocate(shape, dtype, sharding, replica_owners(shape, sharding));
  auto first = first_holders(*t, true);
  fence_holders(*t);  // (the callback may write a shard in place, whose memory queued work may still read)
  for (std::size_t i = 0; i < t->shards.size(); ++i) {
    auto& s = t->shards[i];
    if (first[i] != i || !s.addressable) continue;
    // On host backends the mirror is the shard itself, so the callback writes in place.
    auto staging = Kokkos::create_mirror_view(Kokkos::WithoutInitializing, s.bytes);
    fill(s.index, staging.data());
    if (staging.data() != s.bytes.data()) {
      Kokkos::deep_copy(device(s.device).exec, s.bytes, staging);
      fence_device(device(s.device));  // (the staging ends with this iteration)
    }
  }
  copy_replicas(*t, first);
  return t;
}

}  // namespace tessel::detail
