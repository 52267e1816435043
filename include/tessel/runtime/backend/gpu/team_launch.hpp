#pragma once
// Device backends' region kernels: neighbouring threads read and write neighbouring elements.
// Long rows go to teams (a team per span of a row: the members begin the row together, sharing
// its fused reductions' lanes, then share the span's elements); short rows give a work item one
// element. A reduction's output goes to a team, which reduces its rows the same way (TeamRow).
#include <cstdint>

#include <Kokkos_Core.hpp>

#include "tessel/runtime/device.hpp"
#include "tessel/runtime/kernel_eval.hpp"
#include "tessel/runtime/region_space.hpp"
#include "tessel/runtime/backend/gpu/team_row.hpp"

namespace tessel::backend {

// Rows at least this long go to teams, in spans of at most `team_span` elements (a row with fused
// reductions stays whole: begin_row computes them over the whole row).
inline constexpr std::int64_t team_row_length = 256;
inline constexpr std::int64_t team_span = 4096;

template <bool Unit, bool Fused, class Ev, class V>
void launch_elementwise(ExecSpace const& exec, char const* label, Ev const& ev, V* out, detail::Space const& space,
                        bool rows) {
  int const outer = space.rank - 1;
  std::int64_t const length = space.extent[outer];
  std::int64_t nrows = 1;
  for (int d = 0; d < outer; ++d) nrows *= space.extent[d];
  if (nrows * length == 0) return;
  detail::Space s = space;
  if (!rows && length < team_row_length) {
    Kokkos::parallel_for(
        label, Kokkos::RangePolicy<ExecSpace>(exec, 0, nrows * length), KOKKOS_LAMBDA(std::int64_t i) {
          std::int64_t idx[max_rank];
          detail::unflatten(s, i / length, 0, outer, idx);
          Ev local = ev;
          local.begin_row(idx, outer);
          out[i] = static_cast<V>(local.template at<Unit, Fused>(i % length));
        });
    return;
  }
  std::int64_t const span = rows ? length : team_span;
  std::int64_t const spans = (length + span - 1) / span;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Row = TeamRow<typename Policy::member_type>;
  Policy policy(exec, nrows * spans, Kokkos::AUTO);
  policy.set_scratch_size(0, Kokkos::PerTeam(Row::scratch_bytes));
  Kokkos::parallel_for(
      label, policy, KOKKOS_LAMBDA(typename Policy::member_type const& team) {
        std::int64_t const row = team.league_rank() / spans;
        std::int64_t const begin = (team.league_rank() % spans) * span;
        std::int64_t const end = begin + span < length ? begin + span : length;
        std::int64_t idx[max_rank];
        detail::unflatten(s, row, 0, outer, idx);
        Ev local = ev;
        local.begin_row(idx, outer, Row(team));
        V* o = out + row * length;
        // A team of one (a CPU build of these shapes) writes its span in a plain loop, which the
        // host compiler vectorizes (a TeamThreadRange's stride is the team size, unknown to it).
        if constexpr (specializes_rows)
          if (team.team_size() == 1) {
            Ev const row_eval = local;
#pragma GCC ivdep
            for (std::int64_t e = begin; e < end; ++e) o[e] = static_cast<V>(row_eval.template at<Unit, Fused>(e));
            return;
          }
        Kokkos::parallel_for(Kokkos::TeamThreadRange(team, begin, end),
                             [&](std::int64_t e) { o[e] = static_cast<V>(local.template at<Unit, Fused>(e)); });
      });
}

// A reduction with many outputs (the first `kept` space dimensions index them): a team per output,
// which reduces its rows in order, each as reduce_row does (TeamRow).
template <class Op, class C, class Ev, class V>
void reduce_many_outputs(ExecSpace const& exec, char const* label, Ev const& ev, V* out, detail::Space const& space,
                         int kept, std::int64_t outputs, std::int64_t per_output, C scale) {
  int const outer = space.rank - 1;
  std::int64_t const length = space.extent[outer];
  detail::Space s = space;
  using Policy = Kokkos::TeamPolicy<ExecSpace>;
  using Row = TeamRow<typename Policy::member_type>;
  Policy policy(exec, outputs, Kokkos::AUTO);
  policy.set_scratch_size(0, Kokkos::PerTeam(Row::scratch_bytes));
  Kokkos::parallel_for(
      label, policy, KOKKOS_LAMBDA(typename Policy::member_type const& team) {
        Row const reducer(team);
        std::int64_t const o = team.league_rank();
        C acc = Op::template identity<C>();
        for (std::int64_t r = 0; r < per_output; ++r) {
          std::int64_t idx[max_rank];
          detail::unflatten(s, r, kept, outer, idx);
          detail::unflatten(s, o, 0, kept, idx);
          Ev local = ev;
          local.begin_row(idx, outer, reducer);
          acc = reducer.template reduce<Op, C, false, false>(local, length, acc);
        }
        Kokkos::single(Kokkos::PerTeam(team), [&]() { out[o] = V(detail::scaled<Op>(acc, scale)); });
      });
}

}  // namespace tessel::backend
