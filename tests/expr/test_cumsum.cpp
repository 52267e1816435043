// cumsum: against JAX (tests/data/jax_ops/cumsum.txt) and sharded against unsharded on every test
// mesh and sharding, the scanned axis split or not; a split axis is a local scan plus a carry
// step, never a gather.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <limits>

#include "support/data.hpp"
#include "support/jax_tensors.hpp"
#include "support/meshes.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using Catch::Matchers::ContainsSubstring;

namespace {

// |got - want| within 4 float32 epsilons of the running sum of |x| (XLA's blocked order and a
// carried total both round differently from a left-to-right sum; the error of either is bounded so).
void check_close(std::vector<float> const& got, std::vector<double> const& want, std::vector<double> const& abs_prefix) {
  for (std::size_t k = 0; k < want.size(); ++k) {
    INFO("element " << k << ": " << got[k] << " vs " << want[k]);
    CHECK(std::abs(got[k] - want[k]) <= 4 * std::numeric_limits<float>::epsilon() * abs_prefix[k] + 1e-30);
  }
}

// The running sum of |x| along `axis` of `shape`.
std::vector<double> abs_prefix(std::vector<double> const& x, Shape const& shape, int axis) {
  std::int64_t inner = 1;
  for (std::size_t d = static_cast<std::size_t>(axis) + 1; d < shape.size(); ++d) inner *= shape[d];
  std::int64_t length = shape[static_cast<std::size_t>(axis)];
  std::vector<double> out(x.size());
  for (std::size_t f = 0; f < x.size(); ++f) {
    auto t = (static_cast<std::int64_t>(f) / inner) % length;
    out[f] = std::abs(x[f]) + (t > 0 ? out[f - static_cast<std::size_t>(inner)] : 0.0);
  }
  return out;
}

}  // namespace

TEST_CASE("cumsum matches jnp.cumsum, sharded or not", "[expr][cumsum]") {
  auto v = test::read_jax_tensors("cumsum.txt");
  struct Case {
    char const* name;
    int axis;
  };
  for (auto [name, axis] : {Case{"cumsum_f32_16x8_axis0", 0}, Case{"cumsum_f32_16x8_axis1", 1}, Case{"cumsum_f32_4x6x8_axis1", 1},
                            Case{"cumsum_f32_4x6x8_axis2", 2}, Case{"cumsum_f32_4x40_axis1", 1}, Case{"cumsum_f32_1x300_axis1", 1}}) {
    std::string c = name;
    auto const& x = v.at(c + " x");
    auto want = v.at(c + " out");
    auto bound = abs_prefix(x.values, x.shape, axis);
    INFO(c);
    auto whole = eval(cumsum(device_put(x.as<float>(), x.shape, NamedSharding(make_mesh({1}, {"x"}, {0}), P())), axis)).to_host();
    // Up to 16 elements along the axis XLA:CPU sums left to right, as tessel does: the same bits.
    if (x.shape[static_cast<std::size_t>(axis)] <= 16) CHECK(test::bitwise_equal(whole, want.as<float>()));
    check_close(whole, v.at(c + " ref_f64").values, bound);
    for (auto const& mesh : test::all_meshes()) {
      for (auto const& s : test::shardings_of(mesh, x.shape)) {
        INFO(to_string(mesh) << " " << to_string(s.spec()));
        auto got = eval(cumsum(device_put(x.as<float>(), x.shape, s), axis)).to_host();
        if (s.layout().dim_axes(static_cast<std::size_t>(axis)).empty()) CHECK(test::bitwise_equal(got, whole));
        else check_close(got, v.at(c + " ref_f64").values, bound);
      }
    }
  }
  // int32 wraps like XLA's adds, so any split of the axis gives the same bits.
  for (auto [name, axis] : {Case{"cumsum_i32_16x8_axis0", 0}, Case{"cumsum_i32_16x8_axis1", 1}, Case{"cumsum_i32_4x6x8_axis1", 1},
                            Case{"cumsum_i32_4x6x8_axis2", 2}}) {
    std::string c = name;
    auto const& x = v.at(c + " x");
    auto want = v.at(c + " out").as<std::int32_t>();
    for (auto const& mesh : test::all_meshes()) {
      for (auto const& s : test::shardings_of(mesh, x.shape)) {
        INFO(c << " " << to_string(mesh) << " " << to_string(s.spec()));
        CHECK(test::bitwise_equal(eval(cumsum(device_put(x.as<std::int32_t>(), x.shape, s), axis)).to_host(), want));
      }
    }
  }
}

TEST_CASE("cumsum over a sharded axis is a local scan and a carry, not a gather", "[expr][cumsum]") {
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  auto x = device_put(test::iota_data<float>(Shape{16, 32}), Shape{16, 32}, NamedSharding(mesh, P("a", "b")));
  auto const& p = plan_of(cumsum(exp(x), 1));
  INFO(explain(cumsum(exp(x), 1)));
  CHECK(p.count(plan::StepKind::kernel) == 2);  // exp, then the scan
  CHECK(p.count("cumsum_carry") == 1);
  CHECK(p.count(plan::Collective::all_gather) == 0);
  CHECK_THAT(explain(cumsum(exp(x), 1)), ContainsSubstring("cumsum_carry sum over mesh axes ('b') (groups of 4)"));
  CHECK(plan_of(cumsum(x, 0)).count("cumsum_carry") == 1);
  auto const& q = plan_of(cumsum(x, 0), NamedSharding(mesh, P(None, {"a", "b"})));
  CHECK(q.count("cumsum_carry") == 0);  // computed with the requested sharding: axis 0 whole
  auto got = eval(cumsum(x, 0), NamedSharding(mesh, P(None, {"a", "b"})));
  CHECK(got.sharding() == NamedSharding(mesh, P(None, {"a", "b"})));
}

TEST_CASE("cumsum names an axis out of range", "[expr][cumsum]") {
  auto x = device_put(test::iota_data<float>(Shape{4, 6}), Shape{4, 6}, NamedSharding(make_mesh({8}, {"x"}), P()));
  CHECK_THROWS_WITH(cumsum(x, 2), ContainsSubstring("cumsum: axis 2 is out of range for shape (4, 6) of rank 2"));
  CHECK_THROWS_WITH(cumsum(x, -3), ContainsSubstring("cumsum: axis -3 is out of range"));
}
