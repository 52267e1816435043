// take's kernel: each device looks up the slices its table block holds.
#include "kernel.hpp"

#include <cstdint>
#include <limits>

#include "tessel/core/error.hpp"
#include "tessel/runtime/backend/kernel_traits.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/launch.hpp"

namespace tessel::detail {
namespace {

template <class T>
void take_typed(TensorImpl const& table, TensorImpl const& indices, std::size_t axis, TensorImpl& out,
                  char const* label) {
  std::int64_t const n = table.shape[axis];
  using C = compute_t<T>;  // the 16-bit floats' NaN and -0.0 are their float's, rounded
  T const fill = T(std::numeric_limits<C>::has_quiet_NaN ? std::numeric_limits<C>::quiet_NaN() : std::numeric_limits<C>::min());
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
    bool const first = lo == 0;
    T const* src = reinterpret_cast<T const*>(ts.bytes.data());
    auto const* idx = reinterpret_cast<std::int32_t const*>(indices.shards[pos].bytes.data());
    T* dst = reinterpret_cast<T*>(out.shards[pos].bytes.data());
    std::int64_t const count = pre * m * post;
    // A work item copies a run of one slice (the backend's copy_chunk: a whole slice on hosts, a
    // contiguous loop; one element on GPUs, neighbouring threads on neighbouring elements).
    std::int64_t const chunk = post < backend::copy_chunk ? post : backend::copy_chunk;
    std::int64_t const chunks = chunk > 0 ? (post + chunk - 1) / chunk : 0;
    for_each_index(device(out.shards[pos].device).exec, label, pre * m * chunks, count, KOKKOS_LAMBDA(std::int64_t item) {
      std::int64_t const row = item / chunks, begin = (item % chunks) * chunk;
      std::int64_t const end = begin + chunk < post ? begin + chunk : post;
      std::int64_t const j = row % m, pr = row / m;
      std::int64_t r = idx[j];
      if (r < 0) r += n;
      T* d = dst + row * post;
      if (r >= lo && r < hi) {
        backend::copy_words(d + begin, src + (pr * len + (r - lo)) * post + begin, end - begin, false);
      } else {
        T const v = (r < 0 || r >= n) && first ? fill : elsewhere;
        for (std::int64_t po = begin; po < end; ++po) d[po] = v;
      }
    });
  }
  fence_all_devices();
}

}  // namespace

// Each device's block of the result (tiled as the plan's partial sharding): the slices of its
// table block the indices name; slices another device holds are -0.0 (0 for int32), so the
// all-reduce that sums the devices' blocks along a split axis gives each slice's bits exactly. An
// index outside the table (after one wrap of negatives) gives NaN (INT32_MIN) from the device
// holding the table's first block, as jnp.take's default fill.
void take_kernel(plan::Plan const& plan, plan::Step const& step, RunState& state) {
  KernelArgs const k{plan, step, state};
  TensorImpl const& table = *k.operand(0);
  auto out = TensorImpl::allocate(k.node().shape, table.dtype, *k.node_plan().partial);
  visit(table.dtype, [&](auto t) { take_typed<decltype(t)>(table, *k.operand(1), k.node().axis, *out, k.label()); });
  k.result(std::move(out));
}

}  // namespace tessel::detail
