// The devices' GEMMs under each way of scheduling them on a host (detail::GemmSchedule), on GEMMs
// above the size from which `automatic` may run them side by side (m n k >= 2^18 per device), on
// 1-D, 2-D, 3-D and non-square meshes: every schedule gives the unsharded product.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>

#include "support/meshes.hpp"
#include "tessel/runtime/local_dot.hpp"

using namespace tessel;
using detail::GemmSchedule;

namespace {

// Restores the schedule a test found.
struct ScheduleScope {
  GemmSchedule previous = detail::gemm_schedule();
  explicit ScheduleScope(GemmSchedule s) { detail::set_gemm_schedule(s); }
  ~ScheduleScope() { detail::set_gemm_schedule(previous); }
};

// Largest |got - want| over the largest |want|.
double relative_error(std::vector<float> const& got, std::vector<float> const& want) {
  double err = 0, scale = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::abs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  }
  return err / scale;
}

}  // namespace

TEST_CASE("every GEMM schedule gives the unsharded product on large per-device GEMMs", "[runtime][dot][schedule]") {
  auto single = NamedSharding(make_mesh({1}, {"x"}, {0}), P());
  auto a_host = random::normal(PRNGKey(1), {240, 192}, single).to_host();
  auto b_host = random::normal(PRNGKey(2), {192, 240}, single).to_host();
  auto p_host = random::normal(PRNGKey(3), {24, 64, 96}, single).to_host();
  auto q_host = random::normal(PRNGKey(4), {24, 96, 64}, single).to_host();
  auto product = eval(matmul(device_put(a_host, {240, 192}, single), device_put(b_host, {192, 240}, single))).to_host();
  DotDims batched{{2}, {1}, {0}, {0}};
  auto batched_product =
      eval(dot_general(device_put(p_host, {24, 64, 96}, single), device_put(q_host, {24, 96, 64}, single), batched))
          .to_host();
  for (auto schedule : {GemmSchedule::devices_in_parallel, GemmSchedule::one_at_a_time, GemmSchedule::automatic}) {
    ScheduleScope scope(schedule);
    for (auto const& mesh : test::all_meshes()) {
      INFO(detail::schedule_name(schedule) << " on " << to_string(mesh));
      bool one_axis = mesh.axes().num_axes() == 1;
      AxisName first = mesh.axes().name(0), last = mesh.axes().name(mesh.axes().num_axes() - 1);
      // Rows over the first axis, columns over the last: each device's GEMM is at least
      // 30 x 240 x 192 (on 8 devices over rows), above the 2^18 of m n k.
      auto a = device_put(a_host, {240, 192}, NamedSharding(mesh, P(first, None)));
      auto b = device_put(b_host, {192, 240}, NamedSharding(mesh, one_axis ? P() : P(None, last)));
      CHECK(relative_error(eval(matmul(a, b)).to_host(), product) < 1e-5);
      // A batch of 24 GEMMs over every device of the mesh: three or four 64 x 64 x 96 GEMMs each.
      FixedVector<DimSpec, max_rank> over_all;
      over_all.push_back(DimSpec::of(mesh.axes().names()));
      NamedSharding batch_split(mesh, PartitionSpec::from_dims(over_all));
      auto p = device_put(p_host, {24, 64, 96}, batch_split);
      auto q = device_put(q_host, {24, 96, 64}, batch_split);
      CHECK(relative_error(eval(dot_general(p, q, batched)).to_host(), batched_product) < 1e-5);
    }
  }
}
