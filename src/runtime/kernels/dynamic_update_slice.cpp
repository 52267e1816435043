// dynamic_update_slice's kernel: each device copies its block of the operand (or takes it over, when
// the operand was donated), then writes the part of the update's box that falls inside its block
// (the update is whole along the dimensions the box cuts and tiled like the operand along the
// others, so a device reads only its own update block).
#include <cstdint>

#include "box_starts.hpp"
#include "tessel/runtime/backend/copy_shape.hpp"
#include "tessel/runtime/block_copy.hpp"
#include "../local_device_ids.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/donate.hpp"
#include "tessel/runtime/launch.hpp"
#include "tessel/runtime/rewritten_buffers.hpp"
#include "tessel/runtime/stream.hpp"

namespace tessel::detail {
namespace {

template <class T>
void update_typed(KernelArgs const& k, TensorImpl const& update, TensorImpl& out) {
  auto const& n = k.node();
  int const rank = static_cast<int>(n.shape.size());
  for (std::size_t pos : local_positions(out)) {
    Shape const local = out.shard_shape(pos), box = update.shard_shape(pos);
    if (local.num_elements() == 0 || box.num_elements() == 0) continue;
    BoxStarts const start = box_starts(k, n.shape, update.shape, 2, pos);
    BlockStrides const o = block_strides(local), u = block_strides(box);
    // Where the update's block begins relative to the operand's block, before the start.
    std::int64_t shift[max_rank]{};
    for (int d = 0; d < rank; ++d)
      shift[d] = update.shards[pos].index[static_cast<std::size_t>(d)].start - out.shards[pos].index[static_cast<std::size_t>(d)].start;
    std::int64_t const post = rank > 0 ? box[static_cast<std::size_t>(rank - 1)] : 1;
    std::int64_t const rows = box.num_elements() / post;
    std::int64_t const last = rank > 0 ? local[static_cast<std::size_t>(rank - 1)] : 1;
    T const* src = reinterpret_cast<T const*>(update.shards[pos].bytes.data());
    T* dst = reinterpret_cast<T*>(out.shards[pos].bytes.data());
    for_each_index(device(out.shards[pos].device), k.label(), rows, box.num_elements(), KOKKOS_LAMBDA(std::int64_t row) {
      std::int64_t to = 0, rest = row;
      for (int d = rank - 2; d >= 0; --d) {
        std::int64_t const at = rest % u.extent[d] + start[d] + shift[d];
        if (at < 0 || at >= o.extent[d]) return;  // another device's rows
        to += at * o.stride[d];
        rest /= u.extent[d];
      }
      // Along the last dimension, the run of the update's row inside this block.
      std::int64_t const offset = rank > 0 ? start[rank - 1] + shift[rank - 1] : 0;
      std::int64_t const lo = offset < 0 ? -offset : 0;
      std::int64_t const hi = last - offset < post ? last - offset : post;
      if (lo < hi) backend::copies_on<ExecSpace>::words(dst + to + offset + lo, src + row * post + lo, hi - lo, false);
    });
  }
}

// The operand's buffers as the result's, when it was donated (runtime/donate.hpp) and nothing else
// can see them: this step reads it last in the plan (in every slot holding it), no other tensor
// holds its memory (a view's shards would) and no two of its shards share a buffer (replicas may).
// Null otherwise. Work other devices queued may still read the buffers (a copy out of them), so
// the devices holding them wait for every local queue first, as a buffer from the pool does.
std::shared_ptr<TensorImpl> donated_buffers(KernelArgs const& k, TensorImpl const& in) {
  auto const index = static_cast<std::size_t>(&k.step - k.plan.steps.data());
  int const slot = k.step.operands[0];
  if (!plan::drops_after(k.plan.last_read, k.step, index, slot)) return nullptr;
  // The same tensor in another slot (a second leaf of it) read from this step on.
  for (std::size_t o = 0; o < k.state.values.size() && o < k.plan.last_read.size(); ++o)
    if (static_cast<int>(o) != slot && k.state.values[o].get() == &in && k.plan.last_read[o] >= static_cast<int>(index))
      return nullptr;
  if (!(in.sharding == *k.node_plan().after_collective)) return nullptr;
  // A tensor's shards may be cut from one allocation; what must not exist is an owner of it
  // outside this tensor's shards, or two shards on one buffer (replicas sharing it).
  auto const local = local_positions(in);
  std::vector<int> holders;
  for (std::size_t pos : local) {
    auto const& shard = in.shards[pos];
    holders.push_back(shard.device);
    if (shard.bytes.size() == 0) continue;
    long owners = 0;
    for (std::size_t q : local) {
      auto const& other = in.shards[q];
      owners += same_buffer(shard.memory, other.memory);
      if (q != pos && other.bytes.size() > 0 && other.bytes.data() == shard.bytes.data()) return nullptr;
    }
    if (shard.memory.use_count() != owners) return nullptr;
  }
  if (!take_donation(in)) return nullptr;
  if (work_is_asynchronous()) {
    auto const all = local_device_ids();
    wait_for_all(holders, all);
  }
  return std::make_shared<TensorImpl>(in);
}

}  // namespace

void dynamic_update_slice_kernel(plan::Plan const& plan, plan::Step const& step, RunState& state) {
  KernelArgs const k{plan, step, state};
  TensorImpl const& in = *k.operand(0);
  auto out = donated_buffers(k, in);
  if (!out) {
    out = TensorImpl::allocate(k.node().shape, in.dtype, *k.node_plan().after_collective);
    // The operand's block, whole: it and the result are tiled alike.
    for (std::size_t pos : local_positions(*out)) {
      auto const& to = out->shards[pos];
      if (to.bytes.size() > 0) copy_bytes(device(to.device), to.bytes.data(), in.shards[pos].bytes.data(), to.bytes.size());
    }
  }
  visit(in.dtype, [&](auto t) { update_typed<decltype(t)>(k, *k.operand(1), *out); });
  k.result(std::move(out));
}

}  // namespace tessel::detail
