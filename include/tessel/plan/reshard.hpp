#pragma once
// What a sharding change amounts to in collectives: none, a local slice, an all-gather, an
// all-to-all, a collective-permute, or a short composition of them. The planner prices each step
// with the cost model and explain prints each as its own line; the executor runs a single-step
// reshard with that collective. The same-mesh analysis is constexpr over layouts (one planner,
// also usable at compile time); meshes that differ in shape or device order are compared box by
// box at run time.
//
// Per dimension, the axes two layouts share as a common prefix stay put. Of the rest, axes only
// the source uses are gathered, axes only the target uses are sliced locally, and axes used by
// both (in another dimension or another position) move: an all-to-all over them, which is a
// collective-permute when every device's new block is exactly a block some group member holds
// (P('x', 'y') -> P('y', 'x') on a square mesh). A change that gathers some axes and slices
// others in one dimension, or moves some and gathers or slices others, is one all-to-all (or
// collective-permute) over every removed axis: each device receives only its new block (for
// P(None, None, 'a') -> P('b', 'a') an all-to-all over ('a'), not a gather to P() and a slice).
// An all-to-all here is the runtime's general one (collectives.hpp): each device's new block is
// assembled from the parts its group's members hold.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessel/core/named_sharding.hpp"
#include "tessel/core/shard_layout.hpp"
#include "tessel/plan/collective.hpp"

namespace tessel::plan {

// One primitive step between two layouts over the same mesh axes: a collective, or (none) a local
// slice. `axes` are the mesh axes the collective's groups span (for a local slice: the axes newly
// split), in mesh order.
struct LayoutStep {
  std::optional<Collective> collective;
  PartitionSpec from, to;
  ShardLayout::AxisList axes;
};
// At most two steps (slice then gather); a move or an exchange is one step.
using LayoutSteps = FixedVector<LayoutStep, 2>;

namespace detail {

using AxisList = ShardLayout::AxisList;

constexpr bool contains(AxisList const& list, std::uint8_t a) {
  for (auto x : list)
    if (x == a) return true;
  return false;
}

constexpr PartitionSpec spec_of(MeshAxes const& mesh, FixedVector<AxisList, max_rank> const& dims) {
  FixedVector<DimSpec, max_rank> specs;
  for (auto const& axes : dims) {
    FixedVector<AxisName, max_mesh_axes> names;
    for (auto a : axes) names.push_back(mesh.name(a));
    specs.push_back(DimSpec::of(names));
  }
  while (!specs.empty() && specs.back().replicated()) specs.pop_back();  // prints like the user's
  return PartitionSpec::from_dims(specs);
}

constexpr AxisList sorted(AxisList list) {
  std::sort(list.begin(), list.end());
  return list;
}

// Whether every device's block under `to` is exactly the block some device of its group over
// `axes` holds under `from`: the move is then a collective-permute, not an all-to-all.
constexpr bool blocks_permute(ShardLayout const& from, ShardLayout const& to, Shape const& shape, AxisList const& axes) {
  MeshAxes const& mesh = from.mesh();
  for (int p = 0; p < mesh.num_devices(); ++p) {
    Box want = to.box(shape, p);
    auto cp = mesh.coords(p);
    bool found = false;
    for (int q = 0; q < mesh.num_devices() && !found; ++q) {
      auto cq = mesh.coords(q);
      bool same_group = true;  // q differs from p only on `axes`
      for (std::size_t a = 0; a < mesh.num_axes(); ++a)
        if (cp[a] != cq[a] && !contains(axes, static_cast<std::uint8_t>(a))) same_group = false;
      found = same_group && from.box(shape, q) == want;
    }
    if (!found) return false;
  }
  return true;
}

// Whether a step runs as its collective on this shape: every device's new block is kept locally
// (a slice), tiled exactly by its group's blocks (an all-gather), covered once by them (an
// all-to-all), or one of them (a collective-permute). Always so when both layouts split `shape`
// evenly; an uneven split can break it, as blocks of ceil(n/k) do not nest: 10 rows over
// P(('a', 'b')) on a 2x4 mesh are blocks of 2, and the four of a = 0 hold rows 0-7, not P('a')'s 0-4.
constexpr bool step_fits(ShardLayout const& from, ShardLayout const& to, Shape const& shape, LayoutStep const& step) {
  MeshAxes const& mesh = from.mesh();
  for (int p = 0; p < mesh.num_devices(); ++p) {
    Box const want = to.box(shape, p);
    std::int64_t const size = want.num_elements();
    if (!step.collective) {
      if (intersect(want, from.box(shape, p)).num_elements() != size) return false;
      continue;
    }
    auto cp = mesh.coords(p);
    std::int64_t covered = 0;
    bool one_of_them = false, all_inside = true;
    for (int q = 0; q < mesh.num_devices(); ++q) {
      auto cq = mesh.coords(q);
      bool same_group = true;  // q differs from p only on the step's axes
      for (std::size_t a = 0; a < mesh.num_axes(); ++a)
        if (cp[a] != cq[a] && !contains(step.axes, static_cast<std::uint8_t>(a))) same_group = false;
      if (!same_group) continue;
      Box const have = from.box(shape, q);
      std::int64_t const common = intersect(want, have).num_elements();
      covered += common;
      one_of_them = one_of_them || have == want;
      all_inside = all_inside && common == have.num_elements();
    }
    bool fits = false;
    switch (*step.collective) {
      case Collective::all_gather: fits = all_inside && covered == size; break;
      case Collective::collective_permute: fits = one_of_them; break;
      default: fits = covered == size; break;
    }
    if (!fits) return false;
  }
  return true;
}

}  // namespace detail

// `axes` without the mesh axes of size 1: those split nothing (a device's coordinate on them is
// always 0), so P(None, ('a', 'b')) and P(None, 'b') tile alike on a (1, 8) mesh and a collective
// over them alone is a group of one device, which is no collective at all.
constexpr ShardLayout::AxisList effective_axes(MeshAxes const& mesh, ShardLayout::AxisList const& axes) {
  ShardLayout::AxisList out;
  for (auto a : axes)
    if (mesh.size(a) > 1) out.push_back(a);
  return out;
}

// Whether two layouts over the same mesh axes tile alike: the same axes on every dimension once
// size-1 axes are dropped.
constexpr bool same_tiling(ShardLayout const& a, ShardLayout const& b, std::size_t rank) {
  for (std::size_t d = 0; d < rank; ++d)
    if (!(effective_axes(a.mesh(), a.dim_axes(d)) == effective_axes(b.mesh(), b.dim_axes(d)))) return false;
  return true;
}

// The steps that turn a tensor of `shape` tiled by `from` into one tiled by `to` (same mesh axes,
// same devices in the same order). Empty when the tilings are the same (size-1 mesh axes, which
// split nothing, are left out of the comparison and of every step's axes).
constexpr LayoutSteps decompose(ShardLayout const& from, ShardLayout const& to, Shape const& shape) {
  using detail::AxisList;
  using detail::contains;
  MeshAxes const& mesh = from.mesh();
  std::size_t rank = shape.size();
  FixedVector<AxisList, max_rank> common, from_dims, to_dims;
  AxisList removed, added;
  bool dim_with_both = false;  // some dimension both loses and gains axes
  for (std::size_t d = 0; d < rank; ++d) {
    AxisList a = effective_axes(mesh, from.dim_axes(d)), b = effective_axes(mesh, to.dim_axes(d)), c;
    std::size_t k = 0;
    while (k < a.size() && k < b.size() && a[k] == b[k]) c.push_back(a[k++]);
    for (std::size_t j = k; j < a.size(); ++j) removed.push_back(a[j]);
    for (std::size_t j = k; j < b.size(); ++j) added.push_back(b[j]);
    dim_with_both = dim_with_both || (k < a.size() && k < b.size());
    common.push_back(c);
    from_dims.push_back(a);
    to_dims.push_back(b);
  }
  LayoutSteps steps;
  if (removed.empty() && added.empty()) return steps;
  AxisList moved, gathered, sliced;
  for (auto x : removed) (contains(added, x) ? moved : gathered).push_back(x);
  for (auto x : added)
    if (!contains(removed, x)) sliced.push_back(x);
  PartitionSpec const& A = from.spec();
  PartitionSpec const& B = to.spec();
  if (!moved.empty() && gathered.empty() && sliced.empty()) {
    auto kind = detail::blocks_permute(from, to, shape, moved) ? Collective::collective_permute : Collective::all_to_all;
    steps.push_back({kind, A, B, detail::sorted(moved)});
  } else if (added.empty()) {
    steps.push_back({Collective::all_gather, A, B, detail::sorted(removed)});
  } else if (removed.empty()) {
    steps.push_back({std::nullopt, A, B, detail::sorted(added)});
  } else if (moved.empty() && !dim_with_both) {
    // Slicing first shrinks what the gather moves; legal when no dimension both loses and gains
    // axes (each dimension then only grows or only shrinks at its end).
    FixedVector<AxisList, max_rank> mid;
    for (std::size_t d = 0; d < rank; ++d) mid.push_back(from_dims[d].size() > common[d].size() ? from_dims[d] : to_dims[d]);
    PartitionSpec I = detail::spec_of(mesh, mid);
    steps.push_back({std::nullopt, A, I, detail::sorted(added)});
    steps.push_back({Collective::all_gather, I, B, detail::sorted(removed)});
  } else {
    // What a gather down to the common prefix and a slice would do, in one exchange over the
    // removed axes (GSPMD's all-to-all reshard): within a group (devices that differ only there)
    // the source blocks tile the common prefix's block, which holds each member's target block,
    // so each device receives only its new block, not the gathered one. A collective-permute when
    // each new block is exactly one a group member holds (P('a') -> P('b') on a 2x2x2 mesh).
    auto kind = detail::blocks_permute(from, to, shape, removed) ? Collective::collective_permute : Collective::all_to_all;
    steps.push_back({kind, A, B, detail::sorted(removed)});
  }
  return steps;
}

// One step with the meshes and sizes filled in.
struct ReshardStep {
  std::optional<Collective> collective;  // none: a local slice, or a copy between meshes
  NamedSharding from, to;
  ShardLayout::AxisList axes;  // empty for steps between different meshes
  int group;                   // devices per group (1 for a local slice)
  // Bytes per device the cost formula takes: all-gather, the gathered block; all-to-all and
  // collective-permute, the new block; local slice, the block kept; copy, the most any device
  // sends or receives.
  double bytes;
  bool copy = false;  // between different meshes, by box copies (no collective)
};

// Devices in each group of a collective over `axes`: the product of their sizes.
constexpr int group_size(MeshAxes const& mesh, ShardLayout::AxisList const& axes) {
  int n = 1;
  for (auto a : axes) n *= mesh.size(a);
  return n;
}

namespace detail {

constexpr double block_bytes(NamedSharding const& s, Shape const& shape, std::size_t element_bytes) {
  return static_cast<double>(s.block_shape(shape).num_elements()) * static_cast<double>(element_bytes);
}

// Different meshes (shape or device order), or uneven blocks no collective fits: compare each
// device's new block with what it and the others hold.
constexpr std::vector<ReshardStep> between_meshes(Shape const& shape, std::size_t element_bytes, NamedSharding const& from,
                                        NamedSharding const& to) {
  Mesh const& src = from.mesh();
  Mesh const& dst = to.mesh();
  std::vector<Box> held(static_cast<std::size_t>(src.num_devices()));
  for (int q = 0; q < src.num_devices(); ++q) held[static_cast<std::size_t>(q)] = from.layout().box(shape, q);
  bool all_same = true, all_inside = true, all_held = same_devices(src, dst);
  std::vector<std::int64_t> received(static_cast<std::size_t>(dst.num_devices()), 0);
  std::vector<std::int64_t> sent(static_cast<std::size_t>(src.num_devices()), 0);
  for (int p = 0; p < dst.num_devices(); ++p) {
    Box want = to.layout().box(shape, p);
    // Where the device holding new block p sits in the source mesh (if it is there).
    int at = -1;
    for (int q = 0; q < src.num_devices() && at < 0; ++q)
      if (src.device_id(q) == dst.device_id(p)) at = q;
    Box have;
    if (at >= 0) have = held[static_cast<std::size_t>(at)];
    bool local = at >= 0;
    all_same = all_same && local && have == want;
    all_inside = all_inside && local && intersect(want, have).num_elements() == want.num_elements();
    all_held = all_held && std::find(held.begin(), held.end(), want) != held.end();
    std::int64_t missing = want.num_elements() - (local ? intersect(want, have).num_elements() : 0);
    received[static_cast<std::size_t>(p)] = missing;
    // Who sends: the first holder of each block (replicas the target holds are read locally).
    for (int q = 0; q < src.num_devices(); ++q) {
      auto const& block = held[static_cast<std::size_t>(q)];
      bool first = std::find(held.begin(), held.begin() + q, block) == held.begin() + q;
      if (first && !(local && have == block)) sent[static_cast<std::size_t>(q)] += intersect(want, block).num_elements();
    }
  }
  if (all_same) return {};
  double out = block_bytes(to, shape, element_bytes);
  if (all_inside) return {{std::nullopt, from, to, {}, 1, out}};
  if (all_held) return {{Collective::collective_permute, from, to, {}, dst.num_devices(), out}};
  std::int64_t most = std::max(*std::max_element(received.begin(), received.end()),
                               *std::max_element(sent.begin(), sent.end()));
  return {{std::nullopt, from, to, {}, dst.num_devices(), static_cast<double>(most) * static_cast<double>(element_bytes), true}};
}

}  // namespace detail

// The steps for any two shardings (of the same devices or not); empty when nothing moves and the
// devices keep their blocks. Between different meshes: a local slice, a collective-permute over
// all devices, or a generic copy.
constexpr std::vector<ReshardStep> decompose(Shape const& shape, std::size_t element_bytes, NamedSharding const& from,
                                   NamedSharding const& to) {
  if (from == to) return {};
  if (!(from.mesh() == to.mesh())) return detail::between_meshes(shape, element_bytes, from, to);
  Mesh const& mesh = from.mesh();
  LayoutSteps const steps = decompose(from.layout(), to.layout(), shape);
  if (!from.layout().even(shape) || !to.layout().even(shape)) {
    // Uneven blocks: the collectives the layouts suggest, when they still fit the blocks; else
    // the blocks compared box by box, as between two meshes.
    for (auto const& s : steps)
      if (!detail::step_fits(ShardLayout(mesh.axes(), s.from), ShardLayout(mesh.axes(), s.to), shape, s))
        return detail::between_meshes(shape, element_bytes, from, to);
  }
  std::vector<ReshardStep> out;
  for (auto const& s : steps) {
    NamedSharding a(mesh, s.from), b(mesh, s.to);
    // Every kind's figure is the new block: what an all-gather gathers, what a local slice keeps,
    // what an all-to-all or a collective-permute delivers (for a plain move, the block held).
    double bytes = detail::block_bytes(b, shape, element_bytes);
    int group = s.collective ? group_size(mesh.axes(), s.axes) : 1;
    out.push_back({s.collective, a, b, s.axes, group, bytes});
  }
  return out;
}


// "all-gather over ('x')", "all-gather over ('a') + local slice over ('b')", "collective-permute
// over all devices", "copy between meshes"; "none" for no steps.
std::string to_string(std::span<ReshardStep const> steps);
std::string describe(ReshardStep const& step);

}  // namespace tessel::plan
