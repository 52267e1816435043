#pragma once
// How shardings pass through views and concatenate (the planner's rules for them, on values;
// constexpr, so static_jit plans views at compile time too).
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

#include <vector>

namespace tessel::plan {

struct ViewShardings {
  NamedSharding input;   // what the operand must have (`operand` with what cannot pass unsharded)
  NamedSharding output;  // what the result then has
};

// A sharding from per-dimension mesh axes (trailing unsharded dimensions dropped, so printed specs
// read like a user's): sharding_from_axes. view_shardings: a view's operand and result shardings.
// unshard_dimension: `operand`'s sharding with dimension `axis` unsharded (concatenate's operands).
using AxisList = ShardLayout::AxisList;
using DimAxes = FixedVector<AxisList, max_rank>;

constexpr NamedSharding sharding_from_axes(Mesh const& mesh, DimAxes const& dims) {
  FixedVector<DimSpec, max_rank> specs;
  for (auto const& axes : dims) {
    FixedVector<AxisName, max_mesh_axes> names;
    for (auto a : axes) names.push_back(mesh.axes().name(a));
    specs.push_back(DimSpec::of(names));
  }
  while (!specs.empty() && specs.back().replicated()) specs.pop_back();
  return NamedSharding(mesh, PartitionSpec::from_dims(specs));
}


constexpr DimAxes dims_of(NamedSharding const& s, std::size_t rank) {
  DimAxes dims;
  for (std::size_t d = 0; d < rank; ++d) dims.push_back(s.layout().dim_axes(d));
  return dims;
}

// Groups of operand dimensions [i0, i1) and result dimensions [j0, j1) of equal element count,
// the finest such split of a row-major reshape.
struct Group {
  std::size_t i0, i1, j0, j1;
};
constexpr std::vector<Group> reshape_groups(Shape const& in, Shape const& out) {
  std::vector<Group> groups;
  if (in.num_elements() == 0) {
    groups.push_back({0, in.size(), 0, out.size()});
    return groups;
  }
  std::size_t i = 0, j = 0;
  while (i < in.size() || j < out.size()) {
    Group g{i, i, j, j};
    std::int64_t pi = 1, pj = 1;
    // Take one dimension from each side (a side that ran out has only size-1 dimensions left on
    // the other), then grow the smaller product until they meet.
    if (i < in.size()) pi *= in[i++];
    if (j < out.size()) pj *= out[j++];
    while (pi != pj) {
      if (pi < pj && i < in.size()) pi *= in[i++];
      else if (j < out.size()) pj *= out[j++];
      else break;  // cannot happen for equal element counts
    }
    g.i1 = i;
    g.j1 = j;
    groups.push_back(g);
  }
  return groups;
}

constexpr std::size_t first_nontrivial(Shape const& s, std::size_t b, std::size_t e) {
  for (std::size_t d = b; d < e; ++d)
    if (s[d] > 1) return d;
  return b;
}


constexpr ViewShardings view_shardings(ViewSpec const& view, Shape const& in_shape, Shape const& out_shape,
                             NamedSharding const& operand) {
  Mesh const& mesh = operand.mesh();
  DimAxes in = dims_of(operand, in_shape.size());
  DimAxes out;
  switch (view.kind) {
    case ViewKind::transpose:
      for (auto p : view.perm) out.push_back(in[p]);
      break;
    case ViewKind::slice:
      for (std::size_t d = 0; d < in_shape.size(); ++d)
        if (view.start[d] != 0 || view.limit[d] != in_shape[d]) in[d].clear();
      out = in;
      break;
    case ViewKind::broadcast:
      // A mapped dimension keeps its axes; a widened one (size 1 to n) and a new one are whole.
      out = DimAxes(out_shape.size(), AxisList{});
      for (std::size_t d = 0; d < in_shape.size(); ++d) {
        if (in_shape[d] != out_shape[view.perm[d]]) in[d].clear();
        out[view.perm[d]] = in[d];
      }
      break;
    case ViewKind::reshape: {
      out = DimAxes(out_shape.size(), AxisList{});
      for (Group const& g : reshape_groups(in_shape, out_shape)) {
        std::size_t fi = first_nontrivial(in_shape, g.i0, g.i1);
        std::size_t fo = first_nontrivial(out_shape, g.j0, g.j1);
        AxisList keep;
        if (fi < g.i1 && fo < g.j1) {
          // Every axis of the group moved onto its first dimension (an all-to-all, where the later
          // dimensions of a merge are split), when both first dimensions divide: then each block
          // is one contiguous piece of the group, as XLA's reshape handler arranges before a merge.
          // Else the first dimension's own axes, the others gathered. Axes carry over only when
          // each device's block is the same piece of the group on both sides: the first
          // dimensions divide evenly, or are the same dimension (uneven blocks of ceil(n/k) rows
          // would cut a merged dimension elsewhere).
          AxisList all;
          for (std::size_t d = g.i0; d < g.i1; ++d)
            for (auto a : in[d]) all.push_back(a);
          auto size = [&](AxisList const& axes) {
            std::int64_t n = 1;
            for (auto a : axes) n *= mesh.axes().size(a);
            return n;
          };
          auto carries = [&](AxisList const& axes) {
            return in_shape[fi] == out_shape[fo] ||
                   (in_shape[fi] % size(axes) == 0 && out_shape[fo] % size(axes) == 0);
          };
          if (!all.empty() && carries(all)) {
            keep = all;
          } else {
            keep = in[fi];
            if (!carries(keep)) keep.clear();
          }
        }
        for (std::size_t d = g.i0; d < g.i1; ++d) in[d] = d == fi ? keep : AxisList{};
        if (fo < g.j1) out[fo] = keep;
      }
      break;
    }
  }
  return {sharding_from_axes(mesh, in), sharding_from_axes(mesh, out)};
}

constexpr NamedSharding unshard_dimension(NamedSharding const& operand, std::size_t rank, std::size_t axis) {
  DimAxes dims = dims_of(operand, rank);
  dims[axis].clear();
  return sharding_from_axes(operand.mesh(), dims);
}

}  // namespace tessel::plan
