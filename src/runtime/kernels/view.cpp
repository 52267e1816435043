// A view's kernel, for a transpose or slice the plan makes into a tensor of the view's own
// sharding (a view read in place is part of its consumer's fused kernel; a reshape that keeps
// every block is a `view` step, no kernel).
#include "kernel.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/region_launch.hpp"

namespace tessel::detail {
namespace {

template <class T>
void view_copy(KernelArgs const& k) {
  auto const& n = k.node();
  NamedSharding const& own = *k.node_plan().after_collective;
  ImplPtr const& in = k.operand(0);
  auto out = TensorImpl::allocate(n.shape, in->dtype, own);
  for (std::size_t pos : local_positions(*out)) {
    Shape const local = out->shard_shape(pos);
    if (local.num_elements() == 0) continue;
    Space space = make_space(local, nullptr);
    LeafEval<T> l = view_leaf<T>(n.view, in, static_cast<int>(pos), local, local, space);
    std::int64_t* const strides[] = {l.stride};
    collapse(space, strides);
    auto* o = reinterpret_cast<T*>(out->shards[pos].bytes.data());
    launch_elementwise<false>(device(out->shards[pos].device), k.label(), l, o, space, false,
                              unit_rows(space, strides));
  }
  k.result(std::move(out));
}

}  // namespace

void view_kernel(plan::Plan const& plan, plan::Step const& step, RunState& state) {
  KernelArgs const k{plan, step, state};
  visit(k.operand(0)->dtype, [&](auto t) { view_copy<decltype(t)>(k); });
}

}  // namespace tessel::detail
