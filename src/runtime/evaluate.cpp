#include "tessel/runtime/evaluate.hpp"

#include "tessel/core/error.hpp"
#include "tessel/runtime/device_groups.hpp"
#include "tessel/runtime/block_copy.hpp"
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

namespace {
void row_major_strides(Shape const& shape, std::int64_t* stride) {
  std::int64_t st = 1;
  for (std::size_t j = shape.size(); j-- > 0;) {
    stride[j] = st;
    st *= shape[j];
  }
}
}  // namespace

void leaf_strides(LeafLayout const& leaf, Shape const& region, Space const& space, std::int64_t* stride) {
  auto offset = static_cast<int>(region.size()) - static_cast<int>(leaf.shape.size());
  for (int k = 0; k < space.rank; ++k) {
    int d = space.perm[k];
    int j = d - offset;
    bool moves = d >= 0 && j >= 0 && leaf.shape[static_cast<std::size_t>(j)] != 1;
    stride[k] = moves ? leaf.stride[j] : 0;
  }
}

void leaf_strides(Shape const& leaf, Shape const& region, Space const& space, std::int64_t* stride) {
  LeafLayout layout{leaf, {}, 0};
  row_major_strides(leaf, layout.stride);
  leaf_strides(layout, region, space, stride);
}

LeafLayout view_layout(ViewSpec const& view, Shape const& in_local, Shape const& out_local) {
  std::int64_t in_stride[max_rank];
  row_major_strides(in_local, in_stride);
  LeafLayout l{out_local, {}, 0};
  switch (view.kind) {
    case ViewKind::transpose:
      for (std::size_t j = 0; j < view.perm.size(); ++j) l.stride[j] = in_stride[view.perm[j]];
      break;
    case ViewKind::slice:
      // Sliced dimensions are unsharded (the planner saw to it), so start is a local index there;
      // dimensions taken whole start at 0.
      for (std::size_t d = 0; d < in_local.size(); ++d) {
        l.stride[d] = in_stride[d];
        l.offset += view.start[d] * in_stride[d];
      }
      break;
    case ViewKind::reshape: row_major_strides(out_local, l.stride); break;
  }
  return l;
}

ImplPtr reinterpret_shards(ImplPtr const& in, Shape const& shape, NamedSharding const& sharding) {
  auto out = std::make_shared<TensorImpl>(TensorImpl{shape, in->dtype, sharding, in->shards});
  for (std::size_t pos = 0; pos < out->shards.size(); ++pos)
    out->shards[pos].index = sharding.layout().box(shape, static_cast<int>(pos));
  return out;
}

void concat_shards(std::vector<ImplPtr> const& parts, std::size_t axis, TensorImpl& out) {
  Shape out_local = out.sharding.shard_shape(out.shape);
  Box dst_box = Box::whole(out_local);
  std::size_t element = size_of(out.dtype);
  for (std::size_t pos = 0; pos < out.shards.size(); ++pos) {
    auto const& exec = device(out.shards[pos].device).exec;
    std::int64_t at = 0;
    for (auto const& part : parts) {
      Box src_box = Box::whole(part->sharding.shard_shape(part->shape));
      std::int64_t length = src_box[axis].size();
      src_box[axis] = {at, at + length};
      copy_region(exec, part->shards[pos].bytes.data(), src_box, out.shards[pos].bytes.data(), dst_box, src_box,
                  element);
      at += length;
    }
  }
  fence_all_devices();
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

void divide_in_place(TensorImpl const& t, double divisor) {
  auto divide = [&](auto type_tag) {
    using T = decltype(type_tag);
    T d = static_cast<T>(divisor);
    for (auto const& shard : t.shards) {
      auto* data = reinterpret_cast<T*>(shard.bytes.data());
      Kokkos::parallel_for(
          "tessel::mean_divide",
          Kokkos::RangePolicy<ExecSpace>(device(shard.device).exec, 0, static_cast<std::int64_t>(shard.bytes.size() / sizeof(T))),
          KOKKOS_LAMBDA(std::int64_t i) { data[i] /= d; });
    }
    fence_all_devices();
  };
  if (t.dtype == DType::float32) divide(float{});
  else if (t.dtype == DType::float64) divide(double{});
  else throw Error("mean: integer means are computed in float32");
}

}  // namespace detail
}  // namespace tessel
