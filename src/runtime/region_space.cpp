#include "tessel/runtime/region_space.hpp"

#include <algorithm>

namespace tessel::detail {

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
    case ViewKind::broadcast:
      // New and widened dimensions are read with stride 0; mapped ones hold equal blocks.
      for (std::size_t d = 0; d < in_local.size(); ++d)
        if (in_local[d] != 1) l.stride[view.perm[d]] = in_stride[d];
      break;
  }
  return l;
}

void collapse(Space& space, std::span<std::int64_t* const> strides) {
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

}  // namespace tessel::detail
