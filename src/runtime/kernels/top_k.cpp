// top_k's kernel: each device selects the k best of its block along the axis (a heap of k kept in
// the output itself, then sorted in place: O(n log k) per row); over a split axis the op's
// all-gather step gathers every device's candidates and selects again among them, by their values
// and the global indices they carry.
#include "kernel.hpp"

#include <bit>
#include <cstdint>
#include <limits>

#include "tessel/plan/reshard.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/launch.hpp"
#include "tessel/runtime/tensor_impl.hpp"

namespace tessel::detail {
namespace {

// lax.top_k's total order as an integer: a float's bits made monotonic (negative NaNs below -inf,
// -0.0 below 0.0, positive NaNs above +inf); an integer is its value.
template <class T>
KOKKOS_INLINE_FUNCTION std::int64_t order_key(T v) {
  if constexpr (std::same_as<T, float>) {
    auto s = std::bit_cast<std::int32_t>(v);
    return s < 0 ? s ^ 0x7fffffff : s;
  } else if constexpr (std::same_as<T, double>) {
    auto s = std::bit_cast<std::int64_t>(v);
    return s < 0 ? s ^ 0x7fffffffffffffff : s;
  } else if constexpr (HalfFloat<T>) {
    auto s = static_cast<std::int16_t>(v.bits);
    return s < 0 ? s ^ 0x7fff : s;
  } else {
    return static_cast<std::int64_t>(v);
  }
}

// The element last in that order: what a device offers where its block is shorter than k. A real
// element can only tie with it, and then wins by its index.
template <class T>
T last_in_order() {
  if constexpr (std::same_as<T, float>) return std::bit_cast<float>(~std::uint32_t{0});
  else if constexpr (std::same_as<T, double>) return std::bit_cast<double>(~std::uint64_t{0});
  else if constexpr (HalfFloat<T>) return std::bit_cast<T>(std::uint16_t{0xffff});
  else return std::numeric_limits<T>::lowest();
}
constexpr std::int32_t no_index = std::numeric_limits<std::int32_t>::max();

// One row's selection. Its input is `n` values `stride` apart, with their indices `stride` apart
// in `in_index` or, when that is null, `first + j`; its k best go to `value` / `index` (also
// `stride` apart: the input's block and the output's differ only along the axis), best first:
// larger in the order, then the smaller index.
template <class T>
struct Row {
  T* value;
  std::int32_t* index;
  std::int64_t k, stride;

  KOKKOS_INLINE_FUNCTION static bool better(std::int64_t ka, std::int32_t ia, std::int64_t kb, std::int32_t ib) {
    return ka > kb || (ka == kb && ia < ib);
  }
  KOKKOS_INLINE_FUNCTION bool better_at(std::int64_t a, std::int64_t b) const {
    return better(order_key(value[a * stride]), index[a * stride], order_key(value[b * stride]), index[b * stride]);
  }
  KOKKOS_INLINE_FUNCTION void swap(std::int64_t a, std::int64_t b) const {
    T const v = value[a * stride];
    value[a * stride] = value[b * stride];
    value[b * stride] = v;
    std::int32_t const i = index[a * stride];
    index[a * stride] = index[b * stride];
    index[b * stride] = i;
  }
  // Restores the heap below `at` among the first `size` entries: every entry worse than its
  // children, so the worst kept is at the root.
  KOKKOS_INLINE_FUNCTION void sift_down(std::int64_t at, std::int64_t size) const {
    for (;;) {
      std::int64_t worst = at, l = 2 * at + 1, r = l + 1;
      if (l < size && better_at(worst, l)) worst = l;
      if (r < size && better_at(worst, r)) worst = r;
      if (worst == at) return;
      swap(at, worst);
      at = worst;
    }
  }
  KOKKOS_INLINE_FUNCTION void select(T const* in, std::int32_t const* in_index, std::int64_t first, std::int64_t n,
                                     T pad) const {
    auto index_of = [&](std::int64_t j) {
      return in_index != nullptr ? in_index[j * stride] : static_cast<std::int32_t>(first + j);
    };
    std::int64_t const filled = n < k ? n : k;
    for (std::int64_t j = 0; j < k; ++j) {
      value[j * stride] = j < filled ? in[j * stride] : pad;
      index[j * stride] = j < filled ? index_of(j) : no_index;
    }
    if (k == 0) return;
    for (std::int64_t j = k / 2; j-- > 0;) sift_down(j, k);
    for (std::int64_t j = filled; j < n; ++j) {
      T const v = in[j * stride];
      std::int32_t const i = index_of(j);
      if (!better(order_key(v), i, order_key(value[0]), index[0])) continue;
      value[0] = v;
      index[0] = i;
      sift_down(0, k);
    }
    for (std::int64_t end = k - 1; end > 0; --end) {  // the worst left goes last: best first
      swap(0, end);
      sift_down(0, end);
    }
  }
};

// Every row of every local block of `in` (along `axis`), into `value` / `index`, whose blocks are
// `in`'s with the axis `k` long. `in_index`: the global indices of `in`'s elements (a merge of
// gathered candidates), or null: the block's own position along the axis.
template <class T>
void select_blocks(TensorImpl const& in, TensorImpl const* in_index, std::size_t axis, TensorImpl& value,
                   TensorImpl& index, char const* label) {
  T const pad = last_in_order<T>();
  for (std::size_t pos : local_positions(value)) {
    Shape const local = in.shard_shape(pos);
    std::int64_t const k = value.shard_shape(pos)[axis];
    std::int64_t outer = 1, inner = 1;
    for (std::size_t d = 0; d < axis; ++d) outer *= local[d];
    for (std::size_t d = axis + 1; d < local.size(); ++d) inner *= local[d];
    std::int64_t const n = local[axis], rows = outer * inner;
    if (rows == 0 || k == 0) continue;
    std::int64_t const first = in.shards[pos].index[axis].start;
    T const* src = reinterpret_cast<T const*>(in.shards[pos].bytes.data());
    auto const* src_index =
        in_index != nullptr ? reinterpret_cast<std::int32_t const*>(in_index->shards[pos].bytes.data()) : nullptr;
    T* dst = reinterpret_cast<T*>(value.shards[pos].bytes.data());
    auto* dst_index = reinterpret_cast<std::int32_t*>(index.shards[pos].bytes.data());
    for_each_index(device(value.shards[pos].device), label, rows, rows * (n + k), KOKKOS_LAMBDA(std::int64_t r) {
      std::int64_t const o = r / inner, q = r % inner;
      Row<T> const row{dst + o * k * inner + q, dst_index + o * k * inner + q, k, inner};
      row.select(src + o * n * inner + q, src_index != nullptr ? src_index + o * n * inner + q : nullptr, first, n, pad);
    });
  }
}

void select(TensorImpl const& in, TensorImpl const* in_index, std::size_t axis, TensorImpl& value, TensorImpl& index,
            char const* label) {
  visit(in.dtype, [&](auto tag) { select_blocks<decltype(tag)>(in, in_index, axis, value, index, label); });
}

}  // namespace

// The kernel step: each device's k best of its block; over a split axis (an all-gather step
// follows) at most the longest block's length of them, as candidates with the operand's sharding,
// the indices in the step's slot and the values beside them (RunState::paired). The all-gather
// step: every device gets the group's candidates and selects the k best. The node keeps its values
// or its indices (GraphNode::indices).
void top_k_kernel(plan::Plan const& plan, plan::Step const& step, RunState& state) {
  KernelArgs const k{plan, step, state};
  auto const& n = k.node();
  auto const& np = k.node_plan();
  std::size_t const axis = n.axis;
  ImplPtr& paired = state.paired[static_cast<std::size_t>(step.node)];
  auto keep = [&](ImplPtr const& value, ImplPtr const& index) { k.result(n.indices ? index : value); };
  if (step.kind == plan::StepKind::collective) {
    auto gathered_value = reshard(*paired, *step.to);
    auto gathered_index = reshard(*k.operand(0), *step.to);
    auto value = TensorImpl::allocate(n.shape, paired->dtype, *step.to);
    auto index = TensorImpl::allocate(n.shape, DType::int32, *step.to);
    select(*gathered_value, gathered_index.get(), axis, *value, *index, k.label());
    paired.reset();
    keep(value, index);
    return;
  }
  TensorImpl const& in = *k.operand(0);
  if (!np.collective) {
    auto value = TensorImpl::allocate(n.shape, in.dtype, *np.after_collective);
    auto index = TensorImpl::allocate(n.shape, DType::int32, *np.after_collective);
    select(in, nullptr, axis, *value, *index, k.label());
    keep(value, index);
    return;
  }
  // Candidates: the longest block's length when shorter than k (a full sort sends no padding).
  std::int64_t const longest = in.sharding.block_shape(in.shape)[axis];
  std::int64_t const per_device = longest < n.shape[axis] ? longest : n.shape[axis];
  std::int64_t const group = plan::group_size(in.sharding.mesh().axes(), np.collective_axes);
  Shape candidates = n.shape;
  candidates[axis] = per_device * group;
  auto value = TensorImpl::allocate(candidates, in.dtype, in.sharding);
  auto index = TensorImpl::allocate(candidates, DType::int32, in.sharding);
  select(in, nullptr, axis, *value, *index, k.label());
  paired = std::move(value);
  k.result(std::move(index));
}

}  // namespace tessel::detail
