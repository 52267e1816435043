// Explicit collectives written inside shard_map (expr/manual_collective.hpp), on the Collectives
// interface (runtime/collectives.hpp): each device's block is a member's buffer, and the boxes
// say how the blocks meet. One call per group of the named axes; members on other processes go
// over MPI through the same interface.
#include <format>
#include <vector>

#include "kernel.hpp"
#include "tessel/runtime/block_copy.hpp"
#include "tessel/core/error.hpp"
#include "tessel/runtime/collectives.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/core/device_groups.hpp"

namespace tessel::detail {
namespace {

// all_to_all as boxes: an index space in which member k's block is the box with `source` k and
// every `chunk`, and member k receives every `source` with `chunk` k. The operand's split axis
// becomes (chunk, its rest) and the result's concatenated axis (source, its rest), so both
// blocks are row-major over their boxes exactly as the operand's and the result's layouts are.
struct ExchangeSpace {
  enum Role : std::uint8_t { plain, source, chunk };
  std::vector<std::pair<Role, std::int64_t>> dims;

  void push(Role role, std::int64_t extent) {
    // Neighbouring plain dimensions merge (row-major), which keeps the rank within max_rank.
    if (role == plain && !dims.empty() && dims.back().first == plain) dims.back().second *= extent;
    else dims.emplace_back(role, extent);
  }
  [[nodiscard]] Box box(int member, bool sending) const {
    Box b;
    for (auto [role, extent] : dims) {
      bool one = (role == source && sending) || (role == chunk && !sending);
      b.push_back(one ? IndexRange{member, member + 1} : IndexRange{0, extent});
    }
    return b;
  }
};

ExchangeSpace exchange_space(ManualCollectiveSpec const& m, Shape const& local) {
  ExchangeSpace e;
  std::int64_t const n = m.group;
  std::size_t const split = m.dim, concat = m.dim2, rank = local.size();
  if (m.tiled) {
    for (std::size_t d = 0; d < rank; ++d) {
      if (d == concat) e.push(ExchangeSpace::source, n);
      if (d == split) {
        e.push(ExchangeSpace::chunk, n);
        e.push(ExchangeSpace::plain, local[d] / n);
      } else {
        e.push(ExchangeSpace::plain, local[d]);
      }
    }
  } else {
    // The result drops the split axis (of size n) and has the sources along a new axis `concat`.
    std::size_t out = 0;
    for (std::size_t d = 0; d < rank; ++d) {
      if (d == split) {
        e.push(ExchangeSpace::chunk, n);
        continue;
      }
      if (out++ == concat) e.push(ExchangeSpace::source, n);
      e.push(ExchangeSpace::plain, local[d]);
    }
    if (out == concat) e.push(ExchangeSpace::source, n);
  }
  return e;
}

// Member k's piece of `dim` in a box of `shape`: the k-th of n equal parts (or [k, k+1) when the
// dimension has n elements, not tiled).
Box piece(Shape const& shape, std::size_t dim, int k, int n) {
  Box b = Box::whole(shape);
  std::int64_t part = shape[dim] / n;
  b[dim] = {k * part, (k + 1) * part};
  return b;
}

}  // namespace

void manual_collective_kernel(plan::Plan const& plan, plan::Step const& step, RunState& state) {
  KernelArgs const k{plan, step, state};
  plan::GraphNode const& n = k.node();
  ManualCollectiveSpec const& m = n.manual;
  TensorImpl const& in = *k.operand(0);
  Shape const& local = in.shape;
  Mesh const& mesh = in.sharding.mesh();
  auto out = TensorImpl::allocate(n.shape, in.dtype, in.sharding);
  bool const some_get_nothing = m.kind == ManualKind::ppermute && static_cast<int>(m.perm.size()) < m.group;
  if (some_get_nothing) {  // jax.lax.ppermute: members no pair targets get zeros
    for (std::size_t pos : local_positions(*out))
      fill_bytes(device(out->shards[pos].device), out->shards[pos].bytes.data(), out->shards[pos].bytes.size(),
                 std::byte{0});
  }
  Collectives& c = collectives();
  std::vector<Box> in_boxes, out_boxes;
  for (auto const& positions : device_groups(mesh.axes(), m.mesh_axes)) {
    std::vector<GroupMember> members;
    for (int pos : positions) {
      auto const& src = in.shards[static_cast<std::size_t>(pos)];
      auto const& dst = out->shards[static_cast<std::size_t>(pos)];
      members.push_back({src.device, src.addressable ? src.bytes.data() : nullptr,
                         dst.addressable ? dst.bytes.data() : nullptr});
    }
    int const g = static_cast<int>(members.size());
    in_boxes.clear();
    out_boxes.clear();
    switch (m.kind) {
      case ManualKind::psum:
      case ManualKind::pmax:
      case ManualKind::pmin: c.all_reduce(in.dtype, step.combine, members, Box::whole(local)); break;
      case ManualKind::all_gather:
        // Member j's block is the j-th piece of the gathered axis (a new one of size g unless tiled).
        for (int j = 0; j < g; ++j) out_boxes.push_back(piece(n.shape, m.dim, j, g));
        c.all_gather(in.dtype, members, out_boxes);
        break;
      case ManualKind::psum_scatter:
        for (int j = 0; j < g; ++j) out_boxes.push_back(piece(local, m.dim, j, g));
        c.reduce_scatter(in.dtype, step.combine, members, Box::whole(local), out_boxes);
        break;
      case ManualKind::all_to_all: {
        ExchangeSpace e = exchange_space(m, local);
        for (int j = 0; j < g; ++j) {
          in_boxes.push_back(e.box(j, true));
          out_boxes.push_back(e.box(j, false));
        }
        c.all_to_all(in.dtype, members, in_boxes, out_boxes);
        break;
      }
      case ManualKind::ppermute:
        in_boxes.assign(static_cast<std::size_t>(g), Box::whole(local));
        c.collective_permute(in.dtype, members, in_boxes, in_boxes, m.perm);
        break;
    }
  }
  k.result(std::move(out));
}

}  // namespace tessel::detail
