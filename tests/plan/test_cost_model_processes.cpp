// The cost model across processes: a collective whose groups span processes is priced by the
// model's mpi_ entries, one inside a process by the in-process ones (CostModel::over), as the
// runtime arranges when it runs as several processes (plan::set_devices_per_process).
#include <catch2/catch_test_macros.hpp>

#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include "tessel/plan/cost_model.hpp"
#include "tessel/plan/reshard.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;

namespace {

// Pretends the 8 devices are 2 processes of 4 while it lives.
struct TwoProcesses {
  TwoProcesses() { plan::set_devices_per_process(4); }
  ~TwoProcesses() { plan::set_devices_per_process(0); }
};

plan::CostModel distinct() {
  plan::CostModel m;
  m.all_gather = m.all_reduce = m.reduce_scatter = m.all_to_all = m.collective_permute = {1.0, 100.0};
  m.mpi_all_gather = m.mpi_all_reduce = m.mpi_reduce_scatter = m.mpi_all_to_all = m.mpi_collective_permute = {50.0, 2.0};
  return m;
}

}  // namespace

TEST_CASE("collectives whose groups span processes take the model's mpi entries", "[plan][cost]") {
  auto const m = distinct();
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});  // devices 0..7: process 0 holds 0..3, process 1 4..7
  ShardLayout::AxisList dp, mp, both;
  dp.push_back(0);
  mp.push_back(1);
  both.push_back(0);
  both.push_back(1);
  CHECK(m.over(mesh, dp) == m);  // one process: nothing crosses
  TwoProcesses two;
  CHECK(m.over(mesh, mp) == m);  // mp pairs (0, 1), (2, 3), ... lie inside a process
  auto across = m.over(mesh, dp);  // dp groups (0, 2, 4, 6) span both
  CHECK(across.all_reduce == m.mpi_all_reduce);
  CHECK(across.all_gather == m.mpi_all_gather);
  CHECK(m.over(mesh, both).reduce_scatter == m.mpi_reduce_scatter);
  CHECK(m.over(mesh, {}).collective_permute == m.mpi_collective_permute);  // no axes: every device
  // The same mesh with mp across processes: devices 0 4 1 5 2 6 3 7.
  auto mixed = make_mesh({4, 2}, {"dp", "mp"}, {0, 4, 1, 5, 2, 6, 3, 7});
  CHECK(m.over(mixed, mp).all_reduce == m.mpi_all_reduce);
  CHECK(m.over(mixed, dp) == m);
  // A reshard step over dp is priced as MPI, one over mp as in process.
  Shape shape{64, 64};
  auto over_dp = plan::decompose(shape, 4, NamedSharding(mesh, P("dp")), NamedSharding(mesh, P()));
  auto over_mp = plan::decompose(shape, 4, NamedSharding(mesh, P("mp")), NamedSharding(mesh, P()));
  REQUIRE(over_dp.size() == 1);
  REQUIRE(over_mp.size() == 1);
  CHECK(m.reshard_us(over_dp[0]) == across.all_gather_us(over_dp[0].bytes, 4));
  CHECK(m.reshard_us(over_mp[0]) == m.all_gather_us(over_mp[0].bytes, 2));
  CHECK(m.reshard_us(over_dp[0]) > m.all_gather_us(over_dp[0].bytes, 4));
}

TEST_CASE("the mpi entries survive a round trip through the cost model's file", "[plan][cost][file]") {
  auto m = distinct();
  m.mpi_all_to_all = {12.5, 3.25};
  auto path = (std::filesystem::temp_directory_path() / ("tessel_test_mpi_" + std::to_string(getpid()))).string();
  plan::write_cost_model(m, path);
  CHECK(plan::read_cost_model(path) == m);
  std::remove(path.c_str());
}
