#pragma once
// A region's iteration space on one device: its dimensions (reduced ones last), how each leaf's
// shard maps onto it, and how a flat index or a reduction's output row maps back. The kernels that
// walk it are the backend's (backend/launch_shapes.hpp); runtime/region_launch.hpp launches them.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <type_traits>
#include <vector>

#include "tessel/core/shape.hpp"
#include "tessel/expr/view.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/kernel_eval.hpp"
#include "tessel/runtime/run_plan.hpp"
#include "tessel/runtime/tensor_impl.hpp"

namespace tessel::detail {

using ImplPtr = std::shared_ptr<TensorImpl const>;

// The iteration space of a kernel on one device, and how a tensor's shard maps onto it.
struct Space {
  int rank = 0;
  std::int64_t extent[max_rank]{};
  int perm[max_rank]{};  // space dimension k is dimension perm[k] of the region's shape
};
// Space of a region whose result has local shape `local` (reduction axes, when given, last).
Space make_space(Shape const& local, FixedVector<std::uint8_t, max_rank> const* reduced_axes);
// Strides of a shard of local shape `leaf` broadcast (aligned right) into a region of local shape
// `region`, in the space's dimension order.
void leaf_strides(Shape const& leaf, Shape const& region, Space const& space, std::int64_t* stride);
// Merges space dimensions that every leaf (and a row-major output) walks contiguously.
void collapse(Space& space, std::span<std::int64_t* const> leaf_strides);

// How a view's result reads its operand's shard: the view's local shape, strides (elements) and
// offset into the operand's row-major shard.
struct LeafLayout {
  Shape shape;
  std::int64_t stride[max_rank]{};
  std::int64_t offset = 0;
};
LeafLayout view_layout(ViewSpec const& view, Shape const& in_local, Shape const& out_local);
// leaf_strides for a leaf with any layout.
void leaf_strides(LeafLayout const& leaf, Shape const& region, Space const& space, std::int64_t* stride);

// Shard `pos` of v as a leaf of a region of local shape `region`.
template <class T>
LeafEval<T> leaf(ImplPtr const& v, int pos, Shape const& region, Space const& space) {
  LeafEval<T> l;
  l.data = reinterpret_cast<T const*>(v->shards[static_cast<std::size_t>(pos)].bytes.data());
  leaf_strides(v->shard_shape(static_cast<std::size_t>(pos)), region, space, l.stride);
  return l;
}

// A view of `in` (the operand's value) as a leaf of a region of local shape `region`; `local`
// is the view's own local shape.
template <class T>
LeafEval<T> view_leaf(ViewSpec const& view, ImplPtr const& in, int pos, Shape const& local, Shape const& region,
                      Space const& space) {
  LeafLayout layout = view_layout(view, in->shard_shape(static_cast<std::size_t>(pos)), local);
  LeafEval<T> l;
  l.data = reinterpret_cast<T const*>(in->shards[static_cast<std::size_t>(pos)].bytes.data()) + layout.offset;
  leaf_strides(layout, region, space, l.stride);
  return l;
}

// Do all leaves walk the last space dimension contiguously?
inline bool unit_rows(Space const& space, std::span<std::int64_t* const> strides) {
  return std::all_of(strides.begin(), strides.end(), [&](std::int64_t* s) { return s[space.rank - 1] == 1; });
}

// Space dimensions [first, last) of the flat index `flat` (the last fastest) into idx.
KOKKOS_INLINE_FUNCTION void unflatten(Space const& s, std::int64_t flat, int first, int last, std::int64_t* idx) {
  for (int d = last; d-- > first;) {
    idx[d] = flat % s.extent[d];
    flat /= s.extent[d];
  }
}

// idx, the coordinates of a row (its first `outer` dimensions), moved on to the next row: the
// coordinate that grew (those after it went back to 0), or -1 past the last row.
KOKKOS_INLINE_FUNCTION int next_row_index(Space const& s, int outer, std::int64_t* idx) {
  for (int d = outer; d-- > 0;) {
    if (++idx[d] < s.extent[d]) return d;
    idx[d] = 0;
  }
  return -1;
}

// Row r of output o of a reduction over the space dimensions [kept, rank) (the outputs index the
// first `kept`), reduced into acc in reduce_row's order.
template <class Op, class C, class Ev>
KOKKOS_INLINE_FUNCTION C reduce_output_row(Ev const& ev, Space const& s, int kept, std::int64_t o, std::int64_t r, C acc) {
  int const outer = s.rank - 1;
  std::int64_t idx[max_rank];
  unflatten(s, r, kept, outer, idx);
  unflatten(s, o, 0, kept, idx);
  Ev local = ev;
  local.begin_row(idx, outer);
  return reduce_row<Op, C, false, false>(local, s.extent[outer], acc);
}

}  // namespace tessel::detail
