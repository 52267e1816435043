// A device team's row reduction (backend/gpu/team_row.hpp) against reduce_row, on the host's
// execution space with teams of up to two members: the members share the lanes, one combines
// them, every member returns the value, and a second reduction reuses the lanes after the first.
// The test suite's device-shaped launches run teams of one member on OpenMP, which call reduce_row
// itself; this checks the sharing, which GPU teams run.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tessel/runtime/backend/gpu/team_row.hpp"
#include "support/data.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;

namespace {

template <class T>
detail::LeafEval<T> row_leaf(T const* data, std::int64_t length, std::int64_t row) {
  detail::LeafEval<T> leaf;
  leaf.data = data;
  leaf.stride[0] = length;
  leaf.stride[1] = 1;
  std::int64_t idx[max_rank]{row};
  leaf.begin_row(idx, 1);
  return leaf;
}

// Row l's reduction, then row (l + 1) % rows' into the same accumulator, by a team per row.
template <class Op, class T>
std::vector<T> team_reductions(std::vector<T> const& data, std::int64_t length, int rows, int members) {
  using Space = Kokkos::DefaultHostExecutionSpace;
  using Policy = Kokkos::TeamPolicy<Space>;
  using Row = backend::TeamRow<Policy::member_type>;
  Kokkos::View<T*, Kokkos::HostSpace> out("team_row_out", static_cast<std::size_t>(rows));
  Kokkos::View<int*, Kokkos::HostSpace> disagree("team_row_disagree", static_cast<std::size_t>(rows));
  T const* d = data.data();
  Policy policy(Space(), rows, members);
  policy.set_scratch_size(0, Kokkos::PerTeam(Row::scratch_bytes));
  Kokkos::parallel_for(
      "test_team_row", policy, [=](Policy::member_type const& team) {  // host memory: a host lambda
        Row const reducer(team);
        int const l = team.league_rank();
        T acc = reducer.template reduce<Op, T, false, false>(row_leaf(d, length, l), length, Op::template identity<T>());
        acc = reducer.template reduce<Op, T, false, false>(row_leaf(d, length, (l + 1) % rows), length, acc);
        // Every member holds the same value.
        Kokkos::single(Kokkos::PerTeam(team), [&]() { out(l) = acc; });
        team.team_barrier();
        if (std::memcmp(&acc, &out(l), sizeof(T)) != 0) Kokkos::atomic_add(&disagree(l), 1);
      });
  Kokkos::fence();
  for (int l = 0; l < rows; ++l) CHECK(disagree(l) == 0);
  return {out.data(), out.data() + rows};
}

template <class Op, class T>
std::vector<T> serial_reductions(std::vector<T> const& data, std::int64_t length, int rows) {
  std::vector<T> out;
  for (int l = 0; l < rows; ++l) {
    T acc = detail::reduce_row<Op, T, false, false>(row_leaf(data.data(), length, l), length, Op::template identity<T>());
    out.push_back(detail::reduce_row<Op, T, false, false>(row_leaf(data.data(), length, (l + 1) % rows), length, acc));
  }
  return out;
}

}  // namespace

TEMPLATE_TEST_CASE("a team's row reduction has reduce_row's bits with one or two members", "[runtime][reduce_order]",
                   float, double, std::int32_t) {
  constexpr int rows = 3;
  int const most = std::min(2, Kokkos::DefaultHostExecutionSpace().concurrency());
  for (std::int64_t length : {0, 1, 63, 64, 65, 1000, 4113}) {
    auto data = test::scattered_values<TestType>(rows * length, static_cast<unsigned>(length), 12, 64.0);
    for (int members = 1; members <= most; ++members) {
      INFO("row length " << length << ", " << members << " members");
      auto sums = team_reductions<ops::sum_reduce>(data, length, rows, members);
      auto want_sums = serial_reductions<ops::sum_reduce>(data, length, rows);
      CHECK(std::memcmp(sums.data(), want_sums.data(), sizeof(TestType) * rows) == 0);
      auto maxima = team_reductions<ops::max_reduce>(data, length, rows, members);
      auto want_maxima = serial_reductions<ops::max_reduce>(data, length, rows);
      CHECK(std::memcmp(maxima.data(), want_maxima.data(), sizeof(TestType) * rows) == 0);
    }
  }
}
