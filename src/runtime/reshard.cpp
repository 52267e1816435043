#include "tessel/runtime/reshard.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "tessel/runtime/collectives.hpp"
#include "tessel/core/device_groups.hpp"

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

}  // namespace tessel::detail
