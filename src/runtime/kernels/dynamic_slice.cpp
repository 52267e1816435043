// dynamic_slice's kernel: each device copies the box at the run-time start out of its block (the
// dimensions the box cuts are whole on every device; the others start at 0).
#include <algorithm>
#include <cstdint>

#include "box_starts.hpp"
#include "tessel/runtime/backend/copy_shape.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/launch.hpp"

namespace tessel::detail {
namespace {

template <class T>
void slice_typed(KernelArgs const& k, TensorImpl const& in, TensorImpl& out) {
  auto const& n = k.node();
  Shape const& full = k.plan.graph[static_cast<std::size_t>(n.children[0])].shape;
  int const rank = static_cast<int>(n.shape.size());
  for (std::size_t pos : local_positions(out)) {
    Shape const local = out.shard_shape(pos);
    if (local.num_elements() == 0) continue;
    BoxStarts const start = box_starts(k, full, n.shape, 1, pos);
    BlockStrides const o = block_strides(local), i = block_strides(in.shard_shape(pos));
    std::int64_t const post = rank > 0 ? local[static_cast<std::size_t>(rank - 1)] : 1;
    std::int64_t const chunk = std::min(post, backend::copies_on<ExecSpace>::chunk);
    std::int64_t const chunks = (post + chunk - 1) / chunk;
    std::int64_t const rows = local.num_elements() / post;
    T const* src = reinterpret_cast<T const*>(in.shards[pos].bytes.data());
    T* dst = reinterpret_cast<T*>(out.shards[pos].bytes.data());
    for_each_index(device(out.shards[pos].device), k.label(), rows * chunks, local.num_elements(),
                   KOKKOS_LAMBDA(std::int64_t item) {
                     std::int64_t const row = item / chunks, begin = (item % chunks) * chunk;
                     std::int64_t const end = begin + chunk < post ? begin + chunk : post;
                     std::int64_t from = rank > 0 ? start[rank - 1] : 0, rest = row;
                     for (int d = rank - 2; d >= 0; --d) {
                       from += (rest % o.extent[d] + start[d]) * i.stride[d];
                       rest /= o.extent[d];
                     }
                     backend::copies_on<ExecSpace>::words(dst + row * post + begin, src + from + begin, end - begin, false);
                   });
  }
}

}  // namespace

void dynamic_slice_kernel(plan::Plan const& plan, plan::Step const& step, RunState& state) {
  KernelArgs const k{plan, step, state};
  TensorImpl const& in = *k.operand(0);
  auto out = TensorImpl::allocate(k.node().shape, in.dtype, *k.node_plan().after_collective);
  visit(in.dtype, [&](auto t) { slice_typed<decltype(t)>(k, in, *out); });
  k.result(std::move(out));
}

}  // namespace tessel::detail
