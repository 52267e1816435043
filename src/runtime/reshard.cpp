#include "tessel/runtime/reshard.hpp"

#include <algorithm>
#include <format>
#include <memory>
#include <vector>

#include "tessel/core/device_groups.hpp"
#include "tessel/core/error.hpp"
#include "tessel/runtime/block_copy.hpp"
#include "tessel/runtime/collectives.hpp"
#include "tessel/runtime/distributed.hpp"
#include "tessel/runtime/stream.hpp"
#include "distributed/world.hpp"
#include "replicas.hpp"

namespace tessel::detail {
namespace {

struct GroupArgs {
  std::vector<GroupMember> members;
  std::vector<Box> in_boxes, out_boxes;
};

// Member k of a group is mesh position positions[k] in both tensors (same mesh).
GroupArgs same_mesh_group(TensorImpl const& source, TensorImpl& target, std::vector<int> const& positions) {
  GroupArgs g;
  for (int pos : positions) {
    auto const& in = source.shards[static_cast<std::size_t>(pos)];
    auto& out = target.shards[static_cast<std::size_t>(pos)];
    g.members.push_back({out.device, in.bytes.data(), out.bytes.data()});
    g.in_boxes.push_back(in.index);
    g.out_boxes.push_back(out.index);
  }
  return g;
}

// Each target member receives the block of the first member holding exactly its box (itself
// when it already does).
std::vector<PermutePair> permute_pairs(GroupArgs const& g) {
  std::vector<PermutePair> pairs;
  for (std::size_t t = 0; t < g.out_boxes.size(); ++t) {
    std::size_t s = t;
    if (!(g.in_boxes[t] == g.out_boxes[t]))
      for (s = 0; s < g.in_boxes.size() && !(g.in_boxes[s] == g.out_boxes[t]); ++s) {
      }
    if (s < g.in_boxes.size()) pairs.push_back({static_cast<int>(s), static_cast<int>(t)});
  }
  return pairs;
}

void run(plan::Collective kind, DType dtype, GroupArgs const& g) {
  auto& c = collectives();
  switch (kind) {
    case plan::Collective::all_gather: c.all_gather(dtype, g.members, g.in_boxes); break;
    case plan::Collective::all_to_all: c.all_to_all(dtype, g.members, g.in_boxes, g.out_boxes); break;
    case plan::Collective::collective_permute:
      c.collective_permute(dtype, g.members, g.in_boxes, g.out_boxes, permute_pairs(g));
      break;
    default: break;
  }
}

}  // namespace

namespace {
// The source's shard on `device`, a device of both meshes.
ShardBuffer const& shard_on(TensorImpl const& source, int device) {
  auto ids = source.sharding.mesh().device_ids();
  return source.shards[static_cast<std::size_t>(std::ranges::find(ids, device) - ids.begin())];
}
}  // namespace

Resharded reshard_with_collectives(TensorImpl const& source, NamedSharding const& target) {
  check_reshard_devices(source, target);
  target.check_shape(source.shape);
  auto steps = plan::decompose(source.shape, size_of(source.dtype), source.sharding, target);
  if (steps.empty()) {  // every device keeps its block (explain's "no data moves"): its buffer too
    auto t = std::make_shared<TensorImpl>(TensorImpl{source.shape, source.dtype, target, {}, source.varying});
    for (int id : target.mesh().device_ids()) t->shards.push_back(shard_on(source, id));
    return {t, std::nullopt};
  }
  bool one_collective = steps.size() == 1 && steps[0].collective;
  if (!one_collective) return {reshard_by_copies(source, target), std::nullopt};
  auto const& step = steps[0];
  auto t = TensorImpl::allocate(source.shape, source.dtype, target);
  if (step.axes.empty()) {
    // A permute between meshes over the same devices: one group of every device; member k is
    // the target's mesh position k, whose input is the source's shard on the same device.
    GroupArgs g;
    for (auto& out : t->shards) {
      auto const& in = shard_on(source, out.device);
      g.members.push_back({out.device, in.bytes.data(), out.bytes.data()});
      g.in_boxes.push_back(in.index);
      g.out_boxes.push_back(out.index);
    }
    run(*step.collective, source.dtype, g);
  } else {
    for (auto const& positions : device_groups(target.mesh().axes(), step.axes))
      run(*step.collective, source.dtype, same_mesh_group(source, *t, positions));
  }
  return {t, step.collective};
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

}  // namespace tessel::detail
