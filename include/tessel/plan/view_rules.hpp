#pragma once
// How shardings pass through views and concatenate (the planner's rules for them, on values).
//   transpose    the spec is permuted with the dimensions.
//   slice        dimensions taken whole keep their axes; sliced dimensions must be unsharded.
//   reshape      dimensions are grouped (each group of operand dimensions equals, in size, a group
//                of result dimensions: a split, a merge, or a 1:1 dimension). A group's axes (all
//                of its dimensions', in order) move onto its first non-trivial dimension when that
//                dimension and the group's first result dimension divide by their size: then
//                every device's block is one contiguous piece of the group on both sides, and the
//                reshape moves no data (zero-copy) once the operand is resharded so (an all-to-all
//                when a later dimension was split). Otherwise the group keeps the first
//                dimension's axes if the result dimension divides by them, and the rest is
//                gathered.
//   concatenate  the concatenated dimension is unsharded; the others keep their axes.
#include "tessel/core/named_sharding.hpp"
#include "tessel/expr/view.hpp"

namespace tessel::plan {

// A sharding from per-dimension mesh axes (trailing unsharded dimensions dropped, so printed specs
// read like a user's).
NamedSharding sharding_from_axes(Mesh const& mesh, FixedVector<ShardLayout::AxisList, max_rank> const& dims);

struct ViewShardings {
  NamedSharding input;   // what the operand must have (`operand` with what cannot pass unsharded)
  NamedSharding output;  // what the result then has
};
ViewShardings view_shardings(ViewSpec const& view, Shape const& in_shape, Shape const& out_shape,
                             NamedSharding const& operand);

// `operand`'s sharding with dimension `axis` unsharded: what concatenate's operands all get.
NamedSharding unshard_dimension(NamedSharding const& operand, std::size_t rank, std::size_t axis);

}  // namespace tessel::plan
