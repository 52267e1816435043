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
#include "tessel/runtime/stream.hpp"
#include "distributed/world.hpp"
#include "replicas.hpp"

namespace tessel::detail {

// For each mesh position, the first position holding the same box (of this process's positions
// only, when `local`; another process's positions are then their own): data is moved into that
// one and replicas are copied from it, so replicated shards cost one transfer from the host.
std::vector<std::size_t> buffer_owners(TensorImpl const& t) {
  std::vector<std::size_t> owner(t.shards.size());
  for (std::size_t p = 0; p < owner.size(); ++p) {
    owner[p] = p;
    auto const& s = t.shards[p];
    if (!s.addressable || t.owns_buffer(p)) continue;
    for (std::size_t q = 0; q < p; ++q)
      if (t.shards[q].addressable && t.shards[q].bytes.size() != 0 && t.shards[q].bytes.data() == s.bytes.data()) {
        owner[p] = q;
        break;
      }
  }
  return owner;
}

std::vector<std::size_t> first_holders(TensorImpl const& t, bool local) {
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

void fence_holders(TensorImpl const& t) {
  std::vector<int> ids;
  for (auto const& s : t.shards)
    if (s.addressable && std::find(ids.begin(), ids.end(), s.device) == ids.end()) ids.push_back(s.device);
  fence_devices(ids);
}

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

}  // namespace tessel::detail
