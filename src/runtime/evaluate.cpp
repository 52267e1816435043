#include "tessel/runtime/evaluate.hpp"
#include "tessel/runtime/device_groups.hpp"
#include "tessel/runtime/reshard.hpp"

#include <algorithm>

namespace tessel {

ExecutionCounts& execution_counts() {
  static ExecutionCounts counts;
  return counts;
}

namespace detail {

Space make_space(Shape const& local, FixedVector<std::uint8_t, max_rank> const* reduced_axes) {
  Space s;
  auto add = [&](int dim, std::int64_t extent) {
    s.perm[s.rank] = dim;
    s.extent[s.rank] = extent;
    ++s.rank;
  };
  auto reduced = [&](std::size_t d) {
    return reduced_axes && std::find(reduced_axes->begin(), reduced_axes->end(), d) != reduced_axes->end();
  };
  for (std::size_t d = 0; d < local.size(); ++d)
    if (!reduced(d)) add(static_cast<int>(d), local[d]);
  for (std::size_t d = 0; d < local.size(); ++d)
    if (reduced(d)) add(static_cast<int>(d), local[d]);
  // A kernel needs a last dimension to walk: a rank-0 result, or a reduction over no axes, gets
  // one of extent 1 that no tensor moves along.
  if (s.rank == 0 || (reduced_axes && reduced_axes->empty())) add(-1, 1);
  return s;
}

void leaf_strides(Shape const& leaf, Shape const& region, Space const& space, std::int64_t* stride) {
  std::int64_t row_major[max_rank];
  std::int64_t st = 1;
  for (std::size_t j = leaf.size(); j-- > 0;) {
    row_major[j] = st;
    st *= leaf[j];
  }
  auto offset = static_cast<int>(region.size()) - static_cast<int>(leaf.size());
  for (int k = 0; k < space.rank; ++k) {
    int d = space.perm[k];
    int j = d - offset;
    bool moves = d >= 0 && j >= 0 && leaf[static_cast<std::size_t>(j)] != 1;
    stride[k] = moves ? row_major[j] : 0;
  }
}

void collapse(Space& space, std::vector<std::int64_t*> const& strides) {
  for (int k = space.rank - 2; k >= 0; --k) {
    std::int64_t next = space.extent[k + 1];
    bool mergeable = std::all_of(strides.begin(), strides.end(), [&](std::int64_t* s) { return s[k] == s[k + 1] * next; });
    if (!mergeable) continue;
    space.extent[k] *= next;
    for (auto* s : strides) s[k] = s[k + 1];
    for (int j = k + 1; j + 1 < space.rank; ++j) {
      space.extent[j] = space.extent[j + 1];
      space.perm[j] = space.perm[j + 1];
      for (auto* s : strides) s[j] = s[j + 1];
    }
    --space.rank;
  }
}

ImplPtr reshard_counted(ImplPtr const& from, NamedSharding const& to) {
  ++execution_counts().reshards;
  auto done = reshard_with_collectives(*from, to);
  if (done.collective == plan::ReshardKind::all_gather) ++execution_counts().all_gathers;
  else if (done.collective == plan::ReshardKind::all_to_all) ++execution_counts().all_to_alls;
  else if (done.collective == plan::ReshardKind::collective_permute) ++execution_counts().permutes;
  return done.tensor;
}

ImplPtr complete_reduce(ImplPtr const& partial, plan::NodePlan const& p, ReduceOp op) {
  if (p.collective == plan::Collective::none) return partial;
  Mesh const& mesh = partial->sharding.mesh();
  auto out = TensorImpl::allocate(partial->shape, partial->dtype, *p.after_collective);
  // Devices that differ only in their coordinates on the collective's axes form a group.
  auto groups = device_groups(mesh.axes(), p.collective_axes);
  auto& collectives = in_process_collectives();
  for (auto const& positions : groups) {
    std::vector<GroupMember> members;
    std::vector<Box> pieces;
    for (int pos : positions) {
      auto const& in = partial->shards[static_cast<std::size_t>(pos)];
      auto& o = out->shards[static_cast<std::size_t>(pos)];
      members.push_back({in.device, in.bytes.data(), o.bytes.data()});
      pieces.push_back(o.index);
    }
    Box held = partial->shards[static_cast<std::size_t>(positions[0])].index;
    if (p.collective == plan::Collective::all_reduce) collectives.all_reduce(partial->dtype, op, members, held);
    else collectives.reduce_scatter(partial->dtype, op, members, held, pieces);
  }
  if (p.collective == plan::Collective::all_reduce) ++execution_counts().all_reduces;
  else ++execution_counts().reduce_scatters;
  return out;
}

}  // namespace detail
}  // namespace tessel
