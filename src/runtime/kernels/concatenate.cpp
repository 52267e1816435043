// concatenate's kernel: the operands' blocks copied side by side on each device.
#include "kernel.hpp"
#include "tessel/runtime/block_copy.hpp"
#include "tessel/runtime/device.hpp"

namespace tessel::detail {

// Every operand already has the result's sharding (the rule asked for it), so each device's
// result block is its operands' blocks, side by side along the axis.
void concatenate_kernel(plan::Plan const& plan, plan::Step const& step, RunState& state) {
  KernelArgs const k{plan, step, state};
  std::size_t const axis = k.node().axis;
  auto out = TensorImpl::allocate(k.node().shape, k.operand(0)->dtype, *k.node_plan().after_collective);
  std::size_t element = size_of(out->dtype);
  for (std::size_t pos : local_positions(*out)) {
    Box const dst_box = Box::whole(out->shard_shape(pos));
    Device const& exec = device(out->shards[pos].device);
    std::int64_t at = 0;
    for (std::size_t o = 0; o < step.operands.size(); ++o) {
      TensorImpl const& part = *k.operand(o);
      Box src_box = Box::whole(part.shard_shape(pos));
      std::int64_t length = src_box[axis].size();
      src_box[axis] = {at, at + length};
      copy_region(exec, part.shards[pos].bytes.data(), src_box, out->shards[pos].bytes.data(), dst_box, src_box,
                  element);
      at += length;
    }
  }
  k.result(std::move(out));
}

}  // namespace tessel::detail
