// take's kernel: each device looks up the slices its table block holds.
#include "kernel.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "tessel/core/error.hpp"
#include "tessel/runtime/backend/copy_shape.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/launch.hpp"

namespace tessel::detail {
namespace {

// jnp.take's fill for an index outside the table: NaN, or the integer's lowest value.
template <class T>
T fill_value() {
  using C = compute_t<T>;  // the 16-bit floats' NaN is their float's, rounded
  return T(std::numeric_limits<C>::has_quiet_NaN ? std::numeric_limits<C>::quiet_NaN() : std::numeric_limits<C>::min());
}

// `filled_later`: the table is split along the axis, so the devices' blocks are summed by an
// all-reduce and the fill is written after it (fill_outside); every device then writes the sum's
// identity where it holds nothing, out-of-range indices included.
template <class T, class I>
void take_typed(TensorImpl const& table, TensorImpl const& indices, std::size_t axis, TensorImpl& out,
                bool filled_later, char const* label) {
  std::int64_t const n = table.shape[axis];
  using C = compute_t<T>;  // the 16-bit floats' -0.0 is their float's
  T const fill = fill_value<T>();
  T const elsewhere = T(std::numeric_limits<C>::is_iec559 ? C(-0.0) : C(0));  // the identity of a sum, -0.0 included
  for (std::size_t pos : local_positions(out)) {
    // This device's blocks, which an uneven table or index split makes short (or empty).
    Shape const tl = table.shard_shape(pos);
    std::int64_t pre = 1, post = 1, m = indices.shard_shape(pos).num_elements();
    for (std::size_t d = 0; d < axis; ++d) pre *= tl[d];
    for (std::size_t d = axis + 1; d < tl.size(); ++d) post *= tl[d];
    std::int64_t const len = tl[axis];
    auto const& ts = table.shards[pos];
    std::int64_t const lo = ts.index[axis].start, hi = ts.index[axis].stop;
    T const* src = reinterpret_cast<T const*>(ts.bytes.data());
    auto const* idx = reinterpret_cast<I const*>(indices.shards[pos].bytes.data());
    T* dst = reinterpret_cast<T*>(out.shards[pos].bytes.data());
    std::int64_t const count = pre * m * post;
    // A work item copies a run of one slice (the copy shape's chunk: a whole slice on hosts, a
    // contiguous loop; one element on GPUs, neighbouring threads on neighbouring elements).
    std::int64_t const chunk = std::min(post, backend::copies_on<ExecSpace>::chunk);
    std::int64_t const chunks = chunk > 0 ? (post + chunk - 1) / chunk : 0;
    for_each_index(device(out.shards[pos].device), label, pre * m * chunks, count, KOKKOS_LAMBDA(std::int64_t item) {
      std::int64_t const row = item / chunks, begin = (item % chunks) * chunk;
      std::int64_t const end = begin + chunk < post ? begin + chunk : post;
      std::int64_t const j = row % m, pr = row / m;
      std::int64_t r = idx[j];
      if (r < 0) r += n;
      T* d = dst + row * post;
      if (r >= lo && r < hi) {
        backend::copies_on<ExecSpace>::words(d + begin, src + (pr * len + (r - lo)) * post + begin, end - begin, false);
      } else {
        T const v = (r < 0 || r >= n) && !filled_later ? fill : elsewhere;
        for (std::int64_t po = begin; po < end; ++po) d[po] = v;
      }
    });
  }
}

// Where a row of a result's block finds its index: the block's size along each of the indices'
// dimensions, its start there within the indices' block, and that block's strides. (At namespace
// scope: nvcc refuses a device lambda capturing a type local to a function.)
struct IndexBox {
  int rank = 0;
  std::int64_t size[max_rank]{}, offset[max_rank]{}, stride[max_rank]{};
};

// Where the summed result's index (after one wrap of negatives) is outside the table, jnp.take's
// fill, over each buffer of `out` once. The result's dimensions [axis, axis + indices' rank) are the
// indices'; its boxes may be narrower than the indices' blocks (a reduce-scatter), so each row finds
// its index by global coordinates.
template <class T, class I>
void fill_outside(TensorImpl const& out, TensorImpl const& indices, std::int64_t n, std::size_t axis,
                  char const* label) {
  T const fill = fill_value<T>();
  auto const ir = indices.shape.size();
  for (std::size_t pos : local_positions(out)) {
    auto const& os = out.shards[pos];
    auto const& is = indices.shards[pos];
    if (os.bytes.size() == 0 || !out.owns_buffer(pos)) continue;
    std::int64_t pre = 1, m = 1, post = 1;
    for (std::size_t d = 0; d < os.index.size(); ++d)
      (d < axis ? pre : d < axis + ir ? m : post) *= os.index[d].size();
    IndexBox b;
    b.rank = static_cast<int>(ir);
    std::int64_t stride = 1;
    for (std::size_t k = ir; k-- > 0;) {
      b.size[k] = os.index[axis + k].size();
      b.offset[k] = os.index[axis + k].start - is.index[k].start;
      b.stride[k] = stride;
      stride *= is.index[k].size();
    }
    auto const* idx = reinterpret_cast<I const*>(is.bytes.data());
    T* dst = reinterpret_cast<T*>(os.bytes.data());
    std::int64_t const chunk = std::min(post, backend::copies_on<ExecSpace>::chunk);
    std::int64_t const chunks = (post + chunk - 1) / chunk;
    for_each_index(device(os.device), label, pre * m * chunks, pre * m * post, KOKKOS_LAMBDA(std::int64_t item) {
      std::int64_t const row = item / chunks, begin = (item % chunks) * chunk;
      std::int64_t const end = begin + chunk < post ? begin + chunk : post;
      std::int64_t j = row % m, at = 0;
      for (int k = b.rank; k-- > 0;) {
        at += (j % b.size[k] + b.offset[k]) * b.stride[k];
        j /= b.size[k];
      }
      std::int64_t r = idx[at];
      if (r < 0) r += n;
      if (r >= 0 && r < n) return;
      for (std::int64_t po = begin; po < end; ++po) dst[row * post + po] = fill;
    });
  }
  wait_for_buffer_writers(out);
}

// Calls f with a value of the indices' type: int32, or int64.
template <class F>
void with_index_type(TensorImpl const& indices, F const& f) {
  if (indices.dtype == DType::int64) f(std::int64_t{});
  else f(std::int32_t{});
}

}  // namespace

// The kernel step: each device's block of the result (tiled as the plan's partial sharding), the
// slices of its table block the indices name. Where the table is split along the axis, slices
// another device holds are -0.0 (0 for integers), so the all-reduce summing the devices' blocks
// gives each slice's bits exactly; that collective step is take's too (Step::by_op), and writes
// jnp.take's fill (NaN, or the integer's lowest) where an index is outside the table after the sum,
// so the fill's bits never go through an addition.
void take_kernel(plan::Plan const& plan, plan::Step const& step, RunState& state) {
  KernelArgs const k{plan, step, state};
  auto const& node = k.node();
  ImplPtr& indices = state.paired[static_cast<std::size_t>(step.node)];
  if (step.kind == plan::StepKind::collective) {
    ImplPtr out = complete_reduce(k.operand(0), step.collective, *step.to, step.axes, step.combine);
    std::int64_t const n = plan.graph[static_cast<std::size_t>(node.children[0])].shape[node.axis];
    with_index_type(*indices, [&](auto i) {
      visit(out->dtype, [&](auto t) { fill_outside<decltype(t), decltype(i)>(*out, *indices, n, node.axis, k.label()); });
    });
    indices.reset();
    k.result(std::move(out));
    return;
  }
  TensorImpl const& table = *k.operand(0);
  bool const filled_later = k.node_plan().collective.has_value();
  auto out = TensorImpl::allocate(node.shape, table.dtype, *k.node_plan().partial);
  with_index_type(*k.operand(1), [&](auto i) {
    visit(table.dtype, [&](auto t) {
      take_typed<decltype(t), decltype(i)>(table, *k.operand(1), node.axis, *out, filled_later, k.label());
    });
  });
  if (filled_later) indices = k.operand(1);
  k.result(std::move(out));
}

}  // namespace tessel::detail
