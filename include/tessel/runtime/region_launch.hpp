#pragma once
// A region's iteration space on one device and the Kokkos kernels that walk it: the elementwise
// launch (one output per position, rows cut into chunks unless a row-fused reduction needs them
// whole) and the reduction launch (one output per kept position). Shared by the typed region
// kernels (runtime/region_kernels.hpp) and the executor's untyped steps (src/runtime/execute.cpp).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "tessel/core/shape.hpp"
#include "tessel/expr/view.hpp"
#include "tessel/runtime/buffer_pool.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/kernel_eval.hpp"
#include "tessel/runtime/launch.hpp"
#include "tessel/runtime/run_plan.hpp"
#include "tessel/runtime/tensor_impl.hpp"

namespace tessel::detail {

using ImplPtr = std::shared_ptr<TensorImpl const>;

// The iteration space of a kernel on one device, and how a tensor's shard maps onto it.
struct Space {
  int rank = 0;
  std::int64_t extent[max_rank]{};
  int perm[max_rank]{};  // space dimension k is dimension perm[k] of the region's shape
};
// Space of a region whose result has local shape `local` (reduction axes, when given, last).
Space make_space(Shape const& local, FixedVector<std::uint8_t, max_rank> const* reduced_axes);
// Strides of a shard of local shape `leaf` broadcast (aligned right) into a region of local shape
// `region`, in the space's dimension order.
void leaf_strides(Shape const& leaf, Shape const& region, Space const& space, std::int64_t* stride);
// Merges space dimensions that every leaf (and a row-major output) walks contiguously.
void collapse(Space& space, std::vector<std::int64_t*> const& leaf_strides);

// How a view's result reads its operand's shard: the view's local shape, strides (elements) and
// offset into the operand's row-major shard.
struct LeafLayout {
  Shape shape;
  std::int64_t stride[max_rank]{};
  std::int64_t offset = 0;
};
LeafLayout view_layout(ViewSpec const& view, Shape const& in_local, Shape const& out_local);
// leaf_strides for a leaf with any layout.
void leaf_strides(LeafLayout const& leaf, Shape const& region, Space const& space, std::int64_t* stride);

// Shard `pos` of v as a leaf of a region of local shape `region`.
template <class T>
LeafEval<T> leaf(ImplPtr const& v, int pos, Shape const& region, Space const& space) {
  LeafEval<T> l;
  l.data = reinterpret_cast<T const*>(v->shards[static_cast<std::size_t>(pos)].bytes.data());
  leaf_strides(v->shard_shape(static_cast<std::size_t>(pos)), region, space, l.stride);
  return l;
}

// A view of `in` (the operand's value) as a leaf of a region of local shape `region`; `local`
// is the view's own local shape.
template <class T>
LeafEval<T> view_leaf(ViewSpec const& view, ImplPtr const& in, int pos, Shape const& local, Shape const& region,
                      Space const& space) {
  LeafLayout layout = view_layout(view, in->shard_shape(static_cast<std::size_t>(pos)), local);
  LeafEval<T> l;
  l.data = reinterpret_cast<T const*>(in->shards[static_cast<std::size_t>(pos)].bytes.data()) + layout.offset;
  leaf_strides(layout, region, space, l.stride);
  return l;
}

// Do all leaves walk the last space dimension contiguously?
inline bool unit_rows(Space const& space, std::vector<std::int64_t*> const& strides) {
  return std::all_of(strides.begin(), strides.end(), [&](std::int64_t* s) { return s[space.rank - 1] == 1; });
}

// Launch shapes. Host backends give a work item a row or a 16K-element chunk of one, and a
// reduced output's rows to one thread (below). Device backends, and host builds compiled with
// TESSEL_DEVICE_SHAPED_KERNELS (which test the device shapes' logic on a CPU), give a work item one
// element, and a reduced output to a team whose members compute reduce_row's 64 lanes. Both
// combine in reduce_row's order, so a result has the same bits in either shape.
#if defined(TESSEL_DEVICE_SHAPED_KERNELS) || defined(KOKKOS_ENABLE_CUDA) || defined(KOKKOS_ENABLE_HIP)
#define TESSEL_DEVICE_SHAPES 1

// Space dimensions [first, last) of the flat index `flat` (the last fastest) into idx.
KOKKOS_INLINE_FUNCTION void unflatten(Space const& s, std::int64_t flat, int first, int last, std::int64_t* idx) {
  for (int d = last; d-- > first;) {
    idx[d] = flat % s.extent[d];
    flat /= s.extent[d];
  }
}

template <bool Unit, bool Fused, class Ev, class V>
void launch_elementwise_device(ExecSpace const& exec, char const* label, Ev const& ev, V* out, Space const& space,
                               bool rows) {
  int const outer = space.rank - 1;
  std::int64_t const length = space.extent[outer];
  std::int64_t nrows = 1;
  for (int d = 0; d < outer; ++d) nrows *= space.extent[d];
  if (nrows * length == 0) return;
  Space s = space;
  if (!rows) {
    // One element per work item: neighbouring threads read and write neighbouring elements.
    Kokkos::parallel_for(
        label, Kokkos::RangePolicy<ExecSpace>(exec, 0, nrows * length), KOKKOS_LAMBDA(std::int64_t i) {
          std::int64_t idx[max_rank];
          unflatten(s, i / length, 0, outer, idx);
          Ev local = ev;
          local.begin_row(idx, outer);
          out[i] = static_cast<V>(local.template at<Unit, Fused>(i % length));
        });
    return;
  }
  // Rows with fused reductions: a team per row; each member computes the row's reductions
  // (begin_row) and the members share the row's elements.
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  Kokkos::parallel_for(
      label, Policy(exec, nrows, Kokkos::AUTO), KOKKOS_LAMBDA(typename Policy::member_type const& team) {
        std::int64_t idx[max_rank];
        unflatten(s, team.league_rank(), 0, outer, idx);
        Ev local = ev;
        local.begin_row(idx, outer);
        V* o = out + team.league_rank() * length;
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, length),
                             [&](std::int64_t e) { o[e] = static_cast<V>(local.template at<Unit, Fused>(e)); });
      });
}

// One team per output of a reduction over the last space dimensions (launch_reduce's `kept`
// first dimensions index the outputs): for each of its rows, lane j (one member's) takes elements
// j, j + 64, ... in order, then one member combines the lanes in reduce_row's tree, the row's tail
// and the output's running value.
template <class Op, class C, class Ev, class V>
void reduce_outputs_device(ExecSpace const& exec, char const* label, Ev const& ev, V* out, Space const& space, int kept,
                           std::int64_t outputs, std::int64_t per_output, C scale) {
  constexpr int lanes = reduction_lanes;
  int const outer = space.rank - 1;
  std::int64_t const length = space.extent[outer];
  std::int64_t const whole = length - length % lanes;
  Space s = space;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Lanes = Kokkos::View<C*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryUnmanaged>;
  Policy policy(exec, outputs, Kokkos::AUTO);
  policy.set_scratch_size(0, Kokkos::PerTeam(Lanes::shmem_size(lanes)));
  Kokkos::parallel_for(
      label, policy, KOKKOS_LAMBDA(typename Policy::member_type const& team) {
        Lanes lane(team.team_scratch(0), lanes);
        std::int64_t const o = team.league_rank();
        C acc = Op::template identity<C>();
        for (std::int64_t r = 0; r < per_output; ++r) {
          std::int64_t idx[max_rank];
          unflatten(s, r, kept, outer, idx);
          unflatten(s, o, 0, kept, idx);
          Ev local = ev;
          local.begin_row(idx, outer);
          Kokkos::parallel_for(Kokkos::TeamThreadRange(team, lanes), [&](int j) {
            C a = Op::template identity<C>();
            for (std::int64_t e = j; e < whole; e += lanes)
              a = Op::combine(a, static_cast<C>(local.template at<false, false>(e)));
            lane(j) = a;
          });
          team.team_barrier();
          Kokkos::single(
              Kokkos::PerTeam(team),
              [&](C& total) {
                if (whole > 0) {
                  for (int width = lanes / 2; width >= 1; width /= 2)
                    for (int j = 0; j < width; ++j) lane(j) = Op::combine(lane(j), lane(j + width));
                  total = Op::combine(total, lane(0));
                }
                for (std::int64_t e = whole; e < length; ++e)
                  total = Op::combine(total, static_cast<C>(local.template at<false, false>(e)));
              },
              acc);
          team.team_barrier();  // the lanes are written again for the next row
        }
        Kokkos::single(Kokkos::PerTeam(team), [&]() { out[o] = V(scaled<Op>(acc, scale)); });
      });
}
#endif

template <bool Unit, bool Fused, class Ev, class V>
void launch_elementwise(ExecSpace const& exec, char const* label, Ev const& ev, V* out, Space const& space, bool rows) {
#ifdef TESSEL_DEVICE_SHAPES
  launch_elementwise_device<Unit, Fused>(exec, label, ev, out, space, rows);
#else
  int outer = space.rank - 1;
  std::int64_t length = space.extent[outer];
  std::int64_t nrows = 1;
  for (int d = 0; d < outer; ++d) nrows *= space.extent[d];
  // Rows with fused reductions must stay whole; otherwise long rows are cut into chunks.
  std::int64_t chunk = rows || length < run_chunk ? (length > 0 ? length : 1) : run_chunk;
  std::int64_t chunks = (length + chunk - 1) / chunk;
  Space s = space;
  for_each_index(
      exec, label, nrows * chunks, nrows * length, KOKKOS_LAMBDA(std::int64_t item) {
        std::int64_t row = item / chunks;
        std::int64_t idx[max_rank];
        for (int d = outer; d-- > 0;) {
          idx[d] = row % s.extent[d];
          row /= s.extent[d];
        }
        Ev local = ev;
        local.begin_row(idx, outer);
        std::int64_t begin = (item % chunks) * chunk;
        std::int64_t end = begin + chunk < length ? begin + chunk : length;
        V* o = out + (item / chunks) * length;
        // A fresh copy after begin_row: its row-invariant values (fused reductions, bases) are
        // then plainly loop-invariant, and the output never aliases an input (tessel always
        // writes a new tensor), which ivdep tells the vectorizer.
        Ev const row_eval = local;
        if (rows) {
          // A row-fused kernel computes a while on each row after its reductions read it from
          // memory: it asks for the next row (this thread's next item) as it goes.
          write_row_prefetching<Unit, Fused>(row_eval, o, begin, end, length);
          return;
        }
#pragma GCC ivdep
        for (std::int64_t e = begin; e < end; ++e) o[e] = static_cast<V>(row_eval.template at<Unit, Fused>(e));
      });
#endif
}

// The four instantiations of launch_elementwise, chosen at run time.
template <bool Fused, class Ev, class V>
void launch_elementwise(ExecSpace const& exec, char const* label, Ev const& ev, V* out, Space const& space, bool rows,
                        bool unit) {
  if (unit) launch_elementwise<true, Fused>(exec, label, ev, out, space, rows);
  else launch_elementwise<false, Fused>(exec, label, ev, out, space, rows);
}

// Few outputs: each output's rows are cut into at most this many runs, fixed by the shape alone
// (enough to keep a 256-thread host busy on one output).
inline constexpr std::int64_t reduce_runs = 256;

// Reduces the last `nreduced` space dimensions; one output per combination of the others. A
// mean multiplies by 1 / `global_count` as XLA does (1 when its partial sums still meet in a
// collective).
template <class Op, class V, class Ev>
void launch_reduce(ExecSpace const& exec, char const* label, Ev const& ev, V* out, Space const& space, int nreduced,
                   std::int64_t global_count) {
  int outer = space.rank - 1;
  int kept = space.rank - nreduced;
  std::int64_t outputs = 1, per_output = 1;
  for (int d = 0; d < kept; ++d) outputs *= space.extent[d];
  for (int d = kept; d < outer; ++d) per_output *= space.extent[d];
  std::int64_t length = space.extent[outer];
  using C = compute_t<V>;  // 16-bit floats accumulate in float; each output rounds once
  C scale = Op::divides ? C(1) / static_cast<C>(global_count) : C(1);
  Space s = space;
  auto row_sum = KOKKOS_LAMBDA(std::int64_t o, std::int64_t r, C acc)->C {
    std::int64_t idx[max_rank];
    for (int d = outer; d-- > kept;) {
      idx[d] = r % s.extent[d];
      r /= s.extent[d];
    }
    for (int d = kept; d-- > 0;) {
      idx[d] = o % s.extent[d];
      o /= s.extent[d];
    }
    Ev local = ev;
    local.begin_row(idx, outer);
    return reduce_row<Op, C, false, false>(local, length, acc);
  };
  if (outputs >= 64) {
#ifdef TESSEL_DEVICE_SHAPES
    reduce_outputs_device<Op, C>(exec, label, ev, out, space, kept, outputs, per_output, scale);
#else
    for_each_index(
        exec, label, outputs, outputs * per_output * length, KOKKOS_LAMBDA(std::int64_t o) {
          C acc = Op::template identity<C>();
          for (std::int64_t r = 0; r < per_output; ++r) acc = row_sum(o, r, acc);
          out[o] = V(scaled<Op>(acc, scale));
        });
#endif
  } else {
    // Few outputs: each output's rows are cut into runs that the shape alone fixes, reduced in
    // parallel and then combined in run order, so that the bits are the same whatever the thread
    // count or backend (a Kokkos parallel_reduce joins in the order its threads finish).
    std::int64_t const runs = std::max<std::int64_t>(1, std::min(per_output, reduce_runs));
    auto partial = acquire_device_memory(static_cast<std::size_t>(outputs * runs) * sizeof(C));
    C* p = reinterpret_cast<C*>(partial.get());
    for_each_index(
        exec, label, outputs * runs, outputs * per_output * length, KOKKOS_LAMBDA(std::int64_t i) {
          std::int64_t const o = i / runs, run = i % runs;
          C acc = Op::template identity<C>();
          for (std::int64_t r = run * per_output / runs; r < (run + 1) * per_output / runs; ++r) acc = row_sum(o, r, acc);
          p[i] = acc;
        });
    for_each_index(
        exec, label, outputs, outputs * runs, KOKKOS_LAMBDA(std::int64_t o) {
          C acc = p[o * runs];
          for (std::int64_t run = 1; run < runs; ++run) acc = Op::combine(acc, p[o * runs + run]);
          out[o] = V(scaled<Op>(acc, scale));
        });
    exec.fence();  // before `partial` goes back to the pool
  }
}

}  // namespace tessel::detail
