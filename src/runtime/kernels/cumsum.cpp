// A scan (jnp.cumsum): each device's block scanned along an axis (the kernel step), and the carry
// between blocks when the axis is split over devices (the op's exchange step).
#include "kernel.hpp"
#include "tessel/runtime/distributed.hpp"
#include "../distributed/world.hpp"

#include <algorithm>
#include <format>
#include <map>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/expr/xla_scalar.hpp"
#include "tessel/runtime/buffer_pool.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/launch.hpp"

namespace tessel::detail {
namespace {

// A block seen as (outer, length, inner): element (o, t, i) at (o * length + t) * inner + i.
struct Lines {
  std::int64_t outer = 1, length = 1, inner = 1;
};
Lines lines_of(Shape const& local, std::size_t axis) {
  Lines l;
  for (std::size_t d = 0; d < local.size(); ++d) {
    if (d < axis) l.outer *= local[d];
    else if (d == axis) l.length = local[d];
    else l.inner *= local[d];
  }
  return l;
}



// The kernels below are functions of their own, called from visit's generic lambdas: nvcc defines
// no device lambda inside a generic lambda.

// One block's running sums along its lines.
template <class T>
void scan_block(Device const& exec, char const* label, Lines const l, T const* src, T* dst) {
  using C = compute_t<T>;  // 16-bit floats add in float and round every partial sum (as jnp.cumsum)
  for_each_index(exec, label, l.outer * l.inner, l.outer * l.inner * l.length, KOKKOS_LAMBDA(std::int64_t line) {
    std::int64_t o = line / l.inner, i = line % l.inner;
    C acc = C(0);
    for (std::int64_t t = 0; t < l.length; ++t) {
      std::int64_t at = (o * l.length + t) * l.inner + i;
      T const rounded = T(xla::combine<ReduceOp::sum>(acc, C(src[at])));
      acc = C(rounded);
      dst[at] = rounded;
    }
  });
}

// Combines into every line of `block` a carried value: `carried[o * inner + i]` for line (o, i).
// `stride_o` and `at` place the carried value of line (o, i) at carried[o * stride_o + at + i].
template <ReduceOp Op, class T>
void carry_into(Device const& exec, char const* label, Lines const l, T const* carried, std::int64_t stride_o,
                std::int64_t at, T* block) {
  using C = compute_t<T>;
  std::int64_t const n = l.outer * l.length * l.inner;
  for_each_index(exec, label, n, n, KOKKOS_LAMBDA(std::int64_t f) {
    std::int64_t i = f % l.inner, o = f / (l.inner * l.length);
    block[f] = T(xla::combine<Op>(C(carried[o * stride_o + at + i]), C(block[f])));
  });
}

// A new tensor, sharded like `in`, whose every block is the running combination of in's block
// along `axis`, left to right from the identity (XLA:CPU's order for rows of up to 16).
std::shared_ptr<TensorImpl> local_scan(TensorImpl const& in, std::size_t axis, ReduceOp op, char const* label) {
  if (op != ReduceOp::sum) throw Error("cumsum: only sums are supported");
  auto out = TensorImpl::allocate(in.shape, in.dtype, in.sharding);
  visit(in.dtype, [&](auto tag) {
    using T = decltype(tag);
    for (std::size_t pos : local_positions(*out))
      scan_block(device(out->shards[pos].device), label, lines_of(out->shard_shape(pos), axis),
                 reinterpret_cast<T const*>(in.shards[pos].bytes.data()),
                 reinterpret_cast<T*>(out->shards[pos].bytes.data()));
  });
  return out;
}

// Combines into every block of `t` the last values along `axis` of the block before it, block by
// block in the axis's order, among the devices that hold the same rest of the tensor: afterwards
// each block holds the scan of everything up to it. Empty blocks (past an uneven end) hold nothing
// to carry and stay out of the chains.
void cumsum_carry(TensorImpl& t, std::size_t axis, ReduceOp op, char const* label) {
  // Chains of blocks that hold the same rest of the tensor (the same box on every other
  // dimension), one block of each place along the axis: the k-th replica of a block joins the
  // chain of the k-th replicas (replica chains compute alike).
  std::map<std::vector<std::int64_t>, std::vector<std::size_t>> chains;
  std::map<std::vector<std::int64_t>, std::int64_t> replicas;  // by whole box: replicas seen so far
  for (std::size_t pos = 0; pos < t.shards.size(); ++pos) {
    std::vector<std::int64_t> key, whole;
    Box const& box = t.shards[pos].index;
    if (box.empty()) continue;
    for (std::size_t d = 0; d < box.size(); ++d) {
      whole.push_back(box[d].start);
      if (d != axis) key.push_back(box[d].start);
    }
    key.push_back(replicas[whole]++);
    chains[key].push_back(pos);
  }
  for (auto& [key, members] : chains)
    std::stable_sort(members.begin(), members.end(), [&](std::size_t a, std::size_t b) {
      return t.shards[a].index[axis].start < t.shards[b].index[axis].start;
    });
  visit(t.dtype, [&](auto tag) {
    using T = decltype(tag);
    visit(op, [&]<ReduceOp Op>() {
      for (auto const& chain : chains) {
        auto const& members = chain.second;
        for (std::size_t k = 1; k < members.size(); ++k) {
          auto const& prev = t.shards[members[k - 1]];
          auto& cur = t.shards[members[k]];
          // The blocks of a chain differ only in their length along the axis.
          Lines const l = lines_of(cur.index.extent(), axis);
          std::int64_t const last_at = prev.index[axis].size() - 1;  // the block before's last slice
          if (prev.addressable && cur.addressable) {
            // Each block waits for the one before it: the carry runs down the axis in order.
            wait_for(device(cur.device), device(prev.device));
            // line (o, i) of the block before ends at ((o * (last_at + 1) + last_at) * inner + i)
            carry_into<Op>(device(cur.device), label, l, reinterpret_cast<T const*>(prev.bytes.data()),
                           (last_at + 1) * l.inner, last_at * l.inner, reinterpret_cast<T*>(cur.bytes.data()));
          } else if (prev.addressable || cur.addressable) {
            // The link crosses processes: the block before sends its last slice (outer x inner),
            // once carried itself; every process walks the links in the same order, so the
            // earliest unfinished link always has both its processes waiting on it.
            // (std::vector<bool> packs bits; a bool scan never runs, expressions count bools in
            // int32, but its instantiation must compile.)
            using Word = std::conditional_t<std::same_as<T, bool>, std::uint8_t, T>;
            std::vector<Word> last(static_cast<std::size_t>(l.outer * l.inner));
            distributed::Exchange exchange;
            if (prev.addressable) {
              Box slice = prev.index;  // the block before's last slice, row-major: line (o, i) at o * inner + i
              slice[axis].start = slice[axis].stop - 1;
              shard_to_host(prev, slice, reinterpret_cast<std::byte*>(last.data()), slice, sizeof(T));
              exchange.send(distributed::process_of(cur.device), last.data(), last.size() * sizeof(T));
              exchange.wait();
            } else {
              exchange.receive(distributed::process_of(prev.device), last.data(), last.size() * sizeof(T));
              exchange.wait();
              // Into the device's memory, where the kernel reads it.
              Device const& exec = device(cur.device);
              auto carried = acquire_device_memory(exec, last.size() * sizeof(T));
              enqueue(exec, label, [to = carried.get(), from = last.data(), bytes = last.size() * sizeof(T)](ExecSpace const& space, char const*) {
                Kokkos::deep_copy(space, ByteView(to, bytes),
                                  Kokkos::View<std::byte const*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                                      reinterpret_cast<std::byte const*>(from), bytes));
              });
              carry_into<Op>(exec, label, l, reinterpret_cast<T const*>(carried.get()), l.inner, 0,
                             reinterpret_cast<T*>(cur.bytes.data()));
              fence_device(exec);  // `last` ends with this scope
            }
          }
        }
      }
    });
  });
}

}  // namespace

void cumsum_kernel(plan::Plan const& plan, plan::Step const& step, RunState& state) {
  KernelArgs const k{plan, step, state};
  auto const& n = k.node();
  if (step.kind == plan::StepKind::exchange) {
    // In place: the kernel step just made this tensor and no other value holds it yet.
    cumsum_carry(const_cast<TensorImpl&>(*k.operand(0)), n.axis, n.combine, k.label());
    return;  // the step reads and writes its node's slot
  }
  k.result(local_scan(*k.operand(0), n.axis, n.combine, k.label()));
}

}  // namespace tessel::detail
