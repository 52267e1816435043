#pragma once
// Host backends' region kernels: a work item is a run of short rows, a row, or a 16K-element chunk
// of a long one (rows with fused reductions stay whole), which one core's vector units go through;
// a reduction's output takes all its rows on one thread.
#include <algorithm>
#include <cstdint>

#include <Kokkos_Core.hpp>

#include "tessel/runtime/device.hpp"
#include "tessel/runtime/kernel_eval.hpp"
#include "tessel/runtime/launch.hpp"
#include "tessel/runtime/region_space.hpp"
#include "tessel/runtime/run_plan.hpp"

namespace tessel::backend {

// Rows shorter than this are walked several to a work item: each item copies the evaluator and
// finds its first row's coordinates once, then steps from row to row (step_row), which for a short
// row (a rotary embedding's 32 elements under ten leaves) cost more than the row's elements.
inline constexpr std::int64_t rows_group_elements = 2048;

template <bool Unit, bool Fused, class Ev, class V>
void launch_elementwise(ExecSpace const& exec, char const* label, Ev const& ev, V* out, detail::Space const& space,
                        bool rows) {
  int outer = space.rank - 1;
  std::int64_t length = space.extent[outer];
  std::int64_t nrows = 1;
  for (int d = 0; d < outer; ++d) nrows *= space.extent[d];
  std::int64_t chunk = rows || length < detail::run_chunk ? (length > 0 ? length : 1) : detail::run_chunk;
  std::int64_t chunks = (length + chunk - 1) / chunk;
  // Rows per item: as many as make rows_group_elements, while every thread still gets several items.
  std::int64_t const spread = nrows / (8 * static_cast<std::int64_t>(exec.concurrency()));
  std::int64_t group = chunks > 1 ? 1 : std::max<std::int64_t>(1, std::min(rows_group_elements / chunk, spread));
  std::int64_t groups = (nrows + group - 1) / group;
  detail::Space s = space;
  detail::for_each_index_now(
      exec, label, groups * chunks, nrows * length, KOKKOS_LAMBDA(std::int64_t item) {
        std::int64_t const first = (item / chunks) * group;
        std::int64_t const last = first + group < nrows ? first + group : nrows;
        std::int64_t idx[max_rank];
        detail::unflatten(s, first, 0, outer, idx);
        std::int64_t begin = (item % chunks) * chunk;
        std::int64_t end = begin + chunk < length ? begin + chunk : length;
        Ev local = ev;
        local.begin_row(idx, outer);
        for (std::int64_t r = first;;) {
          V* o = out + r * length;
          // The row's evaluator read in place: local never escapes, so its row-invariant values
          // (fused reductions, bases) are plainly loop-invariant, and the output never aliases an
          // input (tessel always writes a new tensor), which ivdep tells the vectorizer. A copy
          // per row would load what step_row has just stored in narrower pieces (a
          // store-forwarding stall per cache line of the evaluator).
          Ev const& row_eval = local;
          if (rows) {
            // A row-fused kernel computes a while on each row after its reductions read it from
            // memory: it asks for the next row (of this item, or of the thread's next) as it goes.
            detail::write_row_prefetching<Unit, Fused>(row_eval, o, begin, end, length);
          } else {
#pragma GCC ivdep
            for (std::int64_t e = begin; e < end; ++e) o[e] = static_cast<V>(row_eval.template at<Unit, Fused>(e));
          }
          if (++r == last) break;
          int const moved = detail::next_row_index(s, outer, idx);
          KOKKOS_ASSERT(moved >= 0);  // (r < nrows: never past the last row)
          local.step_row(idx, outer, moved, s.extent);
        }
      });
}

// A reduction with many outputs (the first `kept` space dimensions index them): one thread per
// output, which reduces its `per_output` rows in order.
template <class Op, class C, class Ev, class V>
void reduce_many_outputs(ExecSpace const& exec, char const* label, Ev const& ev, V* out, detail::Space const& space,
                         int kept, std::int64_t outputs, std::int64_t per_output, C scale) {
  detail::Space s = space;
  detail::for_each_index_now(
      exec, label, outputs, outputs * per_output * space.extent[space.rank - 1], KOKKOS_LAMBDA(std::int64_t o) {
        C acc = Op::template identity<C>();
        for (std::int64_t r = 0; r < per_output; ++r) acc = detail::reduce_output_row<Op>(ev, s, kept, o, r, acc);
        out[o] = V(detail::scaled<Op>(acc, scale));
      });
}

}  // namespace tessel::backend
