#pragma once
// A row's reductions computed by a device team together: reduce_row's 64 lanes go to the team's
// members (lane j reads elements j, j + 64, ..., so neighbouring threads read neighbouring
// elements), one member combines them in reduce_row's tree and adds the row's tail, and every
// member gets the value. Same lanes, same tree, same tail as reduce_row: the same bits as a host.
// Without it, each member of a row's team would reduce the whole row itself (begin_row).
#include <cstddef>
#include <cstdint>

#include <Kokkos_Core.hpp>

#include "tessel/core/no_contract.hpp"
#include "tessel/runtime/backend/kernel_traits.hpp"
#include "tessel/runtime/kernel_eval.hpp"

namespace tessel::backend {

template <class Member>
struct TeamRow {
  // Team scratch for the lanes of the widest accumulator (double, int64).
  static constexpr std::size_t scratch_bytes = detail::reduction_lanes * 8;

  Member const& team;
  void* lanes;

  // The size goes by value: get_shmem takes a reference, which nvcc's device code cannot bind to
  // a static member.
  KOKKOS_INLINE_FUNCTION explicit TeamRow(Member const& member)
      : team(member), lanes(member.team_scratch(0).get_shmem(std::ptrdiff_t{scratch_bytes})) {}

  // Every member calls it, with the same arguments (begin_row runs on all of them alike).
  template <class Op, class T, bool Unit, bool Fused, class Ev>
  KOKKOS_INLINE_FUNCTION T reduce(Ev const& ev, std::int64_t length, T acc) const {
    static_assert(sizeof(T) <= 8 && alignof(T) <= 8, "a lane holds at most 8 bytes");
    // A team of one (a CPU build of these shapes: OpenMP's AUTO teams) runs reduce_row itself: the
    // same lanes and tree, kept in vector registers instead of scratch and two barriers. Not on GPU
    // compilers, where it would be one more row loop per reduction for nvcc to compile.
    if constexpr (specializes_rows)
      if (team.team_size() == 1) return detail::reduce_row<Op, T, Unit, Fused>(ev, length, acc);
    constexpr int n = detail::reduction_lanes;
    T* lane = static_cast<T*>(lanes);
    std::int64_t const whole = length - length % n;
    Kokkos::parallel_for(Kokkos::TeamThreadRange(team, n), [&](int j) {
      T a = Op::template identity<T>();
      for (std::int64_t e = j; e < whole; e += n)
        a = Op::combine(a, rounded_operand(static_cast<T>(ev.template at<Unit, Fused>(e))));
      lane[j] = a;
    });
    team.team_barrier();
    Kokkos::single(
        Kokkos::PerTeam(team),
        [&](T& total) {
          if (whole > 0) {
            for (int width = n / 2; width >= 1; width /= 2)
              for (int j = 0; j < width; ++j) lane[j] = Op::combine(lane[j], lane[j + width]);
            total = Op::combine(total, lane[0]);
          }
          for (std::int64_t e = whole; e < length; ++e)
            total = Op::combine(total, rounded_operand(static_cast<T>(ev.template at<Unit, Fused>(e))));
        },
        acc);
    team.team_barrier();  // the lanes are free for the row's next reduction
    return acc;
  }
};

}  // namespace tessel::backend
