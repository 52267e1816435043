#include "tessel/runtime/tensor_impl.hpp"

#include <algorithm>
#include <format>
#include <string>
#include <utility>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/core/fixed_vector.hpp"
#include "tessel/runtime/backend/devices.hpp"
#include "tessel/runtime/block_copy.hpp"
#include "tessel/runtime/buffer_pool.hpp"
#include "tessel/runtime/distributed.hpp"
#include "tessel/runtime/replay_hooks.hpp"
#include "tessel/runtime/reshard.hpp"
#include "tessel/runtime/stream.hpp"
#include "distributed/world.hpp"

namespace tessel::detail {
namespace {

// For each mesh position, the first position holding the same box (of this process's positions
// only, when `local`; another process's positions are then their own): data is moved into that
// one and replicas are copied from it, so replicated shards cost one transfer from the host.
std::vector<std::size_t> first_holders(TensorImpl const& t, bool local = false) {
  std::vector<std::size_t> first(t.shards.size());
  for (std::size_t i = 0; i < t.shards.size(); ++i) {
    auto const& shard = t.shards[i];
    first[i] = i;
    if (local && !shard.addressable) continue;
    auto const begin = t.shards.begin();
    auto same = [&](ShardBuffer const& s) { return s.index == shard.index && (!local || s.addressable); };
    first[i] = static_cast<std::size_t>(std::find_if(begin, begin + static_cast<std::ptrdiff_t>(i), same) - begin);
  }
  return first;
}

// Each replica's device copies the block from the first holder's, after that device's work.
void copy_replicas(TensorImpl& t, std::vector<std::size_t> const& first) {
  for (std::size_t i = 0; i < first.size(); ++i)
    if (std::size_t const from = first[i]; from != i && t.shards[i].bytes.data() != t.shards[from].bytes.data()) {
      Device const& to = device(t.shards[i].device);
      wait_for(to, device(t.shards[from].device));
      Box const& box = t.shards[i].index;
      copy_region(to, t.shards[from].bytes.data(), box, t.shards[i].bytes.data(), box, box, size_of(t.dtype));
    }
}

}  // namespace

void fence_holders(TensorImpl const& t) {
  std::vector<int> ids;
  for (auto const& s : t.shards)
    if (s.addressable && std::find(ids.begin(), ids.end(), s.device) == ids.end()) ids.push_back(s.device);
  fence_devices(ids);
}

namespace {

void check_host_data(char const* what, HostBytes const& host, Shape const& shape, DType dtype) {
  if (host.dtype != dtype)
    throw Error(std::format("{}: host data is {} but the tensor is {}", what, name(host.dtype), name(dtype)));
  if (static_cast<std::int64_t>(host.count) != shape.num_elements())
    throw Error(std::format("{}: host data has {} elements but shape {} needs {}", what, host.count, to_string(shape),
                            shape.num_elements()));
}


}  // namespace

void wait_for_buffer_writers(TensorImpl const& t) {
  if (!work_is_asynchronous()) return;
  Event last;  // (replicas of one buffer are usually neighbours: its writer's event is recorded once)
  void const* last_buffer = nullptr;
  for (std::size_t pos = 0; pos < t.shards.size(); ++pos) {
    auto const& s = t.shards[pos];
    if (!s.addressable || s.index.empty() || t.owns_buffer(pos)) continue;
    auto const first = std::find_if(t.shards.begin(), t.shards.end(), [&](ShardBuffer const& o) {
      return o.addressable && o.bytes.data() == s.bytes.data();
    });
    Device const& writer = device(first->device);
    if (writer.id == s.device) continue;
    if (s.bytes.data() != last_buffer) {
      last = record_event(writer);
      last_buffer = s.bytes.data();
    }
    wait_event(device(s.device), last);
  }
}

void throw_null_tensor() { throw Error("tessel::Tensor: built from a null TensorImpl"); }
void block_until_ready(TensorImpl const& t) {
  fence_holders(t);
}

void throw_unset_tensor(DType dtype) {
  throw Error(std::format("tessel::Tensor<{}>: used before a value was assigned (it was default-constructed)",
                          name(dtype)));
}

bool TensorImpl::owns_buffer(std::size_t pos) const {
  // (An empty shard holds nothing; its pointer may be where the next shard's buffer starts.)
  auto const& s = shards[pos];
  if (s.bytes.size() == 0) return true;
  for (std::size_t q = 0; q < pos; ++q)
    if (shards[q].bytes.size() != 0 && shards[q].bytes.data() == s.bytes.data()) return false;
  return true;
}

std::vector<std::size_t> replica_owners(Shape const& shape, NamedSharding const& sharding) {
  auto const& ids = sharding.mesh().device_ids();
  std::vector<std::size_t> owner(ids.size());
  std::vector<std::pair<std::size_t, Box>> owners;  // this process's, with their boxes
  for (std::size_t p = 0; p < ids.size(); ++p) {
    owner[p] = p;
    if (!is_local_device(ids[p])) continue;
    Box box = sharding.layout().box(shape, static_cast<int>(p));
    auto same = std::find_if(owners.begin(), owners.end(), [&](auto const& o) {
      return o.second == box && shares_memory(ids[o.first], ids[p]);
    });
    if (same != owners.end()) owner[p] = same->first;
    else owners.emplace_back(p, std::move(box));
  }
  return owner;
}

bool TensorImpl::fully_addressable() const {
  return std::all_of(shards.begin(), shards.end(), [](ShardBuffer const& s) { return s.addressable; });
}

std::shared_ptr<TensorImpl const> with_varying(std::shared_ptr<TensorImpl const> t, std::uint32_t varying) {
  if (t->varying == varying) return t;
  auto copy = std::make_shared<TensorImpl>(*t);
  copy->varying = varying;
  return copy;
}

std::vector<std::size_t> local_positions(TensorImpl const& t) {
  std::vector<std::size_t> out;
  out.reserve(t.shards.size());
  for (std::size_t pos = 0; pos < t.shards.size(); ++pos)
    if (t.shards[pos].addressable) out.push_back(pos);
  return out;
}

namespace {
struct UnitsOfATensor {  // (a FixedVector's capacity message)
  static constexpr char const* what = "units (GPUs) holding one tensor's shards in a process";
};
// "0, 1, 2" (the devices at these mesh positions), for messages.
std::string device_list(TensorImpl const& t, std::vector<std::size_t> const& positions) {
  std::string s;
  for (std::size_t pos : positions) s += std::format("{}{}", s.empty() ? "" : ", ", t.shards[pos].device);
  return s;
}
}  // namespace

std::shared_ptr<TensorImpl> TensorImpl::allocate(Shape const& shape, DType dtype, NamedSharding const& sharding,
                                                 std::span<std::size_t const> owner) {
  not_replayable("a tensor made outside an evaluation");
  note_tensor_made();
  sharding.check_shape(shape);
  auto t = std::make_shared<TensorImpl>(TensorImpl{shape, dtype, sharding, {}, 0});
  Mesh const& mesh = sharding.mesh();
  if (!owner.empty() && owner.size() != mesh.device_ids().size())
    throw Error(std::format("tessel: internal error: {} buffer owners for {} shards", owner.size(),
                            mesh.device_ids().size()));
  t->shards.reserve(static_cast<std::size_t>(mesh.num_devices()));
  // This process's shards on one unit (one host, or one GPU: runtime/device_placement.hpp) share
  // one block of the pool, each at an offset aligned as Kokkos aligns: one pool look-up and one
  // owner per tensor and unit instead of one per shard.
  struct Block {
    ExecSpace const* exec;  // (a device's instance on the unit: where the block is allocated)
    int unit;
    std::size_t total = 0;
    std::shared_ptr<std::byte> memory;
  };
  FixedVector<Block, 64, UnitsOfATensor> blocks;  // (on the stack: a small tensor's allocation costs no more)
  struct Place {
    std::size_t block = 0, offset = 0;
  };
  std::size_t largest = 0;
  std::vector<Place> places;
  places.reserve(mesh.device_ids().size());
  for (std::size_t position = 0; position < mesh.device_ids().size(); ++position) {
    int const id = mesh.device_ids()[position];
    int const flat = static_cast<int>(position);
    Box index = sharding.layout().box(shape, flat);
    if (!is_local_device(id)) {
      if (id < 0 || id >= device_count()) (void)device(id);  // throws: no such device
      t->shards.push_back(ShardBuffer{id, index, ByteView(), nullptr, false});
      places.push_back({});
      continue;
    }
    ExecSpace const& exec = device(id).exec;  // fails clearly for a mesh built before the device count shrank
    int const unit = backend::unit_of(exec);
    auto block = std::find_if(blocks.begin(), blocks.end(), [unit](Block const& b) { return b.unit == unit; });
    if (block == blocks.end()) {
      blocks.push_back(Block{&exec, unit, 0, nullptr});
      block = blocks.end() - 1;
    }
    std::size_t const bytes = static_cast<std::size_t>(index.num_elements()) * size_of(dtype);
    t->shards.push_back(ShardBuffer{id, index, ByteView(), nullptr});
    places.push_back({static_cast<std::size_t>(block - blocks.begin()), block->total});
    if (!owner.empty() && owner[position] != position) {
      std::size_t const o = owner[position];
      if (o > position || !t->shards[o].addressable || !(t->shards[o].index == index) ||
          !shares_memory(t->shards[o].device, id))
        throw Error(std::format("tessel: internal error: shard {} cannot share shard {}'s buffer", position, o));
      continue;  // shares its owner's buffer
    }
    std::size_t const aligned = aligned_shard_bytes(bytes);
    block->total += aligned;
    largest = std::max(largest, bytes);
  }
  try {
    for (std::size_t k = 0; k < blocks.size(); ++k) {
      // Each device is charged its own shards (core/buffer_bytes.hpp; more than the list holds: the first).
      constexpr std::size_t most = 8;
      MemoryCharge charges[most];  // (uninitialized past n)
      std::size_t n = 0;
      for (std::size_t pos = 0; pos < places.size(); ++pos) {
        bool const owns = owner.empty() || owner[pos] == pos;
        if (!t->shards[pos].addressable || !owns || places[pos].block != k) continue;
        std::size_t const aligned = aligned_shard_bytes(static_cast<std::size_t>(t->shards[pos].index.num_elements()) * size_of(dtype));
        if (n < most) charges[n++] = {t->shards[pos].device, aligned};
        else charges[0].bytes += aligned;
      }
      blocks[k].memory = acquire_device_memory(*blocks[k].exec, blocks[k].total, mesh.device_ids(),
                                               std::span<MemoryCharge const>(charges, n));
    }
  } catch (OutOfMemory const& e) {
    std::size_t total = 0;
    for (Block const& b : blocks) total += b.total;
    auto local = local_positions(*t);
    auto buffers = static_cast<std::size_t>(std::count_if(local.begin(), local.end(), [&](std::size_t pos) {
      return owner.empty() || owner[pos] == pos;
    }));
    std::string shared;
    if (buffers < local.size())
      shared = std::format(" in {} buffer{}: replicas share memory", buffers, buffers == 1 ? "" : "s");
    throw OutOfMemory(std::format("out of memory on device{} {} for a {} tensor of shape {} sharded {}: its shard "
                                  "needs {} bytes ({:.3g} GiB), {} bytes for the {} shard{} this process holds{} ({})",
                                  local.size() == 1 ? "" : "s", device_list(*t, local), name(dtype), to_string(shape),
                                  to_string(sharding), largest, static_cast<double>(largest) / (1 << 30), total,
                                  local.size(), local.size() == 1 ? "" : "s", shared, e.what()),
                      e.bytes());
  }
  for (std::size_t pos = 0; pos < t->shards.size(); ++pos) {
    ShardBuffer& s = t->shards[pos];
    if (!s.addressable) continue;
    if (!owner.empty() && owner[pos] != pos) {
      s.memory = t->shards[owner[pos]].memory;
      s.bytes = t->shards[owner[pos]].bytes;
      continue;
    }
    std::size_t const bytes = static_cast<std::size_t>(s.index.num_elements()) * size_of(dtype);
    auto const& memory = blocks[places[pos].block].memory;
    s.memory = std::shared_ptr<std::byte>(memory, memory.get() + places[pos].offset);  // shares the block's owner
    s.bytes = ByteView(s.memory.get(), bytes);
  }
  return t;
}

void shard_to_host(ShardBuffer const& shard, Box const& region, std::byte* host, Box const& host_box,
                   std::size_t element) {
  if (region.empty()) return;
  fence_device(device(shard.device));  // the shard's writers
  auto mirror = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), shard.bytes);
  copy_region_on_host(mirror.data(), shard.index, host, host_box, region, element);
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
  copy_region_on_host(host, host_box, mirror.data(), shard.index, region, element);
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
  CopyBatch pack = CopyBatch::on_host();
  for (auto const& [s, mirror] : staged) {
    std::byte* dsts[] = {mirror.data()};
    pack.add(src, box, s->index, s->index, dsts);
  }
  fence_holders(t);  // (a new tensor's memory may be a freed one's that queued work still reads)
  pack.launch_on_host(element);
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

void check_reshard_devices(TensorImpl const& source, NamedSharding const& target) {
  Mesh const& from = source.sharding.mesh();
  if (from.num_devices() != 1 && !same_devices(from, target.mesh()))
    throw Error(std::format("device_put: the tensor is on {} but the target sharding {} is on {}; tessel reshards "
                            "only between meshes over the same devices, or from a single device",
                            to_string(from), to_string(target), to_string(target.mesh())));
}

std::shared_ptr<TensorImpl> reshard(TensorImpl const& source, NamedSharding const& target) {
  if (source.varying)
    throw Error(std::format("device_put: a per-device value inside shard_map (a {} block whose copies differ along "
                            "mesh axes {}) has no global layout to reshard to {}; return it from the body and give "
                            "its layout in out_specs",
                            to_string(source.shape), varying_text(source.sharding.mesh().axes(), source.varying),
                            to_string(target)));
  return reshard_with_collectives(source, target).tensor;
}

std::shared_ptr<TensorImpl> reshard_by_copies(TensorImpl const& source, NamedSharding const& target) {
  check_reshard_devices(source, target);
  auto t = TensorImpl::allocate(source.shape, source.dtype, target);
  auto src_first = first_holders(source);
  std::size_t const element = size_of(source.dtype);
  // Every process walks the same (target block, source block) pairs in the same order, so the
  // messages between two processes match; each part crosses processes only when the target's
  // process holds no replica of the source block.
  distributed::Exchange exchange;
  struct Arrival {
    std::vector<std::byte> packed;
    Box region;
    ShardBuffer* dst;
  };
  std::vector<Arrival> arrivals;
  std::vector<std::vector<std::byte>> departures;
  for (auto& dst : t->shards) {
    int const dst_process = distributed::process_of(dst.device);
    for (std::size_t j = 0; j < source.shards.size(); ++j) {
      if (src_first[j] != j) continue;
      Box region = intersect(source.shards[j].index, dst.index);
      if (region.empty()) continue;
      // The replica to read: one on the target's device, else one in the target's process (a
      // local copy either way), else the first.
      ShardBuffer const* src = &source.shards[j];
      for (std::size_t k = j; k < source.shards.size(); ++k) {
        ShardBuffer const& r = source.shards[k];
        if (src_first[k] != j) continue;
        if (r.device == dst.device) {
          src = &r;
          break;
        }
        if (distributed::process_of(r.device) == dst_process && distributed::process_of(src->device) != dst_process)
          src = &r;
      }
      int const src_process = distributed::process_of(src->device);
      if (dst.addressable && src->addressable) {
        // On the target's device, after the source's writers (ordered on its holder's device).
        wait_for(device(dst.device), device(src->device));
        copy_region(device(dst.device), src->bytes.data(), src->index, dst.bytes.data(), dst.index, region,
                    element);
      } else if (dst.addressable) {
        auto& a = arrivals.emplace_back(
            Arrival{std::vector<std::byte>(static_cast<std::size_t>(region.num_elements()) * element), region, &dst});
        exchange.receive(src_process, a.packed.data(), a.packed.size());
      } else if (src->addressable) {
        auto& packed = departures.emplace_back(static_cast<std::size_t>(region.num_elements()) * element);
        shard_to_host(*src, region, packed.data(), region, element);
        exchange.send(dst_process, packed.data(), packed.size());
      }
          }
  }
  exchange.wait();
  for (auto& a : arrivals) host_to_shard(a.packed.data(), a.region, *a.dst, a.region, element);
  return t;
}

void gather(TensorImpl const& source, void* out, std::size_t count, DType dtype) {
  not_replayable("a read to the host (to_host)");
  check_host_data("gather", HostBytes{out, count, dtype}, source.shape, source.dtype);
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
  CopyBatch unpack = CopyBatch::on_host();
  for (auto const& [s, mirror] : staged) unpack.add(mirror.data(), s->index, whole, s->index, dsts);
  fence_holders(source);  // the shards' writers
  bool copied = false;
  for (auto const& [s, mirror] : staged)
    if (mirror.data() != s->bytes.data()) {
      Kokkos::deep_copy(device(s->device).exec, mirror, s->bytes);
      copied = true;
    }
  if (copied) fence_holders(source);  // the staging copies
  unpack.launch_on_host(size_of(dtype));
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
