#pragma once
// Launching a region's kernels on one device: the elementwise launch (one output per position) and
// the reduction launch (one output per kept position), in the backend's shapes
// (backend/launch_shapes.hpp). Shared by the typed region kernels (runtime/region_kernels.hpp) and
// the executor's untyped steps (src/runtime/execute.cpp).
#include <algorithm>
#include <cstdint>

#include "tessel/core/buffer_bytes.hpp"
#include "tessel/runtime/backend/launch_shapes.hpp"
#include "tessel/runtime/buffer_pool.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/kernel_eval.hpp"
#include "tessel/runtime/launch.hpp"
#include "tessel/runtime/region_space.hpp"

namespace tessel::detail {

// The elementwise kernel for rows that every leaf walks with stride 1 (`unit`) or not, and for a
// region whose reductions are all row-fused (Fused) or not, where the backend instantiates them
// apart (backend::specializes_rows); otherwise its one general kernel.
// Enqueued on device d (runtime/stream.hpp).
template <bool Fused, class Ev, class V>
void launch_elementwise(Device const& d, char const* label, Ev const& ev, V* out, Space const& space, bool rows,
                        bool unit) {
  enqueue(d, label, [ev, out, space, rows, unit](ExecSpace const& exec, char const* name) {
    if constexpr (!backend::specializes_rows) {
      backend::launch_elementwise<false, false>(exec, name, ev, out, space, rows);
    } else {
      if (unit) backend::launch_elementwise<true, Fused>(exec, name, ev, out, space, rows);
      else backend::launch_elementwise<false, Fused>(exec, name, ev, out, space, rows);
    }
  });
}


// Reduces the last `nreduced` space dimensions; one output per combination of the others. A
// mean multiplies by 1 / `global_count` as XLA does (1 when its partial sums still meet in a
// collective).
template <class Op, class V, class Ev>
void launch_reduce(Device const& d, char const* label, Ev const& ev, V* out, Space const& space, int nreduced,
                   std::int64_t global_count) {
  int kept = space.rank - nreduced;
  std::int64_t outputs = 1, per_output = 1;
  for (int d = 0; d < kept; ++d) outputs *= space.extent[d];
  for (int d = kept; d < space.rank - 1; ++d) per_output *= space.extent[d];
  std::int64_t const length = space.extent[space.rank - 1];
  using C = compute_t<V>;  // 16-bit floats accumulate in float; each output rounds once
  C scale = Op::divides ? C(1) / static_cast<C>(global_count) : C(1);
  if (outputs >= reduce_scratch_outputs) {
    enqueue(d, label, [ev, out, space, kept, outputs, per_output, scale](ExecSpace const& exec, char const* name) {
      backend::reduce_many_outputs<Op, C>(exec, name, ev, out, space, kept, outputs, per_output, scale);
    });
  } else {
    // Few outputs: each output's rows are cut into runs that the shape alone fixes, reduced in
    // parallel and then combined in run order, so that the bits are the same whatever the thread
    // count or backend (a Kokkos parallel_reduce joins in the order its threads finish).
    Space s = space;
    std::int64_t const runs = std::max<std::int64_t>(1, std::min(per_output, reduce_runs));
    auto partial = acquire_device_memory(d, static_cast<std::size_t>(outputs * runs) * sizeof(C));
    C* p = reinterpret_cast<C*>(partial.get());
    for_each_index(
        d, label, outputs * runs, outputs * per_output * length, KOKKOS_LAMBDA(std::int64_t i) {
          std::int64_t const o = i / runs, run = i % runs;
          C acc = Op::template identity<C>();
          for (std::int64_t r = run * per_output / runs; r < (run + 1) * per_output / runs; ++r)
            acc = reduce_output_row<Op>(ev, s, kept, o, r, acc);
          p[i] = acc;
        });
    for_each_index(
        d, label, outputs, outputs * runs, KOKKOS_LAMBDA(std::int64_t o) {
          C acc = p[o * runs];
          for (std::int64_t run = 1; run < runs; ++run) acc = Op::combine(acc, p[o * runs + run]);
          out[o] = V(scaled<Op>(acc, scale));
        });
    // (back to the pool now: it carries the events after the kernels above, buffer_pool.hpp)
  }
}

}  // namespace tessel::detail
