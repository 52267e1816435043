// iota / arange: a leaf computed in the kernel, on every test mesh and sharding, and the causal
// mask it makes, fused into softmax and checked against JAX (tests/data/jax_ops).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <limits>

#include "support/data.hpp"
#include "support/jax_tensors.hpp"
#include "support/meshes.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using Catch::Matchers::ContainsSubstring;

namespace {

template <class T>
std::vector<T> host_iota(Shape const& shape, int dimension) {
  std::vector<T> v(static_cast<std::size_t>(shape.num_elements()));
  for (std::size_t flat = 0; flat < v.size(); ++flat) {
    std::int64_t rest = static_cast<std::int64_t>(flat), coord = 0;
    for (std::size_t d = shape.size(); d-- > 0;) {
      if (static_cast<int>(d) == dimension) coord = rest % shape[d];
      rest /= shape[d];
    }
    v[flat] = static_cast<T>(coord);
  }
  return v;
}

}  // namespace

TEST_CASE("iota gives each element its coordinate, with any sharding its consumer has", "[expr][iota]") {
  Shape shape{4, 6, 8};
  for (auto const& mesh : test::all_meshes()) {
    auto base = test::iota_data<float>(shape);
    for (auto const& s : test::shardings_of(mesh, shape)) {
      auto x = device_put(base, shape, s);
      for (int d = 0; d < 3; ++d) {
        INFO(to_string(mesh) << " " << to_string(s.spec()) << " dimension " << d);
        // iota inside a region reads the region's sharding; as an int32 result it is its own kernel.
        auto got = eval(x + astype<float>(iota<std::int32_t>(shape, d))).to_host();
        auto want = host_iota<float>(shape, d);
        for (std::size_t k = 0; k < want.size(); ++k) want[k] += base[k];
        CHECK(test::bitwise_equal(got, want));
        CHECK(test::bitwise_equal(eval(iota<std::int32_t>(shape, d), s).to_host(), host_iota<std::int32_t>(shape, d)));
      }
    }
  }
}

TEST_CASE("iota alone runs on device 0; arange is a 1-D iota", "[expr][iota]") {
  auto a = eval(arange<float>(10));
  CHECK(a.shape() == Shape{10});
  CHECK(a.sharding().mesh().num_devices() == 1);
  CHECK(test::bitwise_equal(a.to_host(), host_iota<float>(Shape{10}, 0)));
  CHECK(test::bitwise_equal(eval(iota<std::int32_t>(Shape{3, 5}, -1) * 2).to_host(), [] {
    auto v = host_iota<std::int32_t>(Shape{3, 5}, 1);
    for (auto& e : v) e *= 2;
    return v;
  }()));
}

TEST_CASE("iota names a dimension that is not in its shape", "[expr][iota]") {
  CHECK_THROWS_WITH(iota<float>(Shape{4, 6}, 2), ContainsSubstring("iota: dimension 2 is out of range for shape (4, 6) of rank 2"));
  CHECK_THROWS_WITH(iota<float>(Shape{4, 6}, -3), ContainsSubstring("iota: dimension -3 is out of range"));
  CHECK_THROWS_WITH(iota<float>(Shape{-1}, 0), ContainsSubstring("-1"));
}

TEST_CASE("a causal mask from iota fuses into softmax and matches JAX", "[expr][iota]") {
  auto vectors = test::read_jax_tensors("causal_softmax.txt");
  float const ninf = -std::numeric_limits<float>::infinity();
  for (std::string c : {"causal_softmax_normal", "causal_softmax_large"}) {
    auto const& s = vectors.at(c + " s");
    auto want = vectors.at(c + " out").as<float>();
    auto masked = [&](auto const& x) {
      return softmax(where(iota<std::int32_t>(s.shape, 0) >= iota<std::int32_t>(s.shape, 1), x, ninf), -1);
    };
    // One device: within 4 float32 steps of JAX (XLA sums a row in another order).
    auto whole = eval(masked(device_put(s.as<float>(), s.shape, NamedSharding(make_mesh({1}, {"x"}, {0}), P())))).to_host();
    for (std::size_t k = 0; k < want.size(); ++k)
      CHECK(std::abs(whole[k] - want[k]) <= 4 * std::numeric_limits<float>::epsilon() * std::max(1.0f, want[k]));
    for (auto const& mesh : test::all_meshes()) {
      for (auto const& sh : test::shardings_of(mesh, s.shape)) {
        INFO(c << " " << to_string(mesh) << " " << to_string(sh.spec()));
        auto x = device_put(s.as<float>(), s.shape, sh);
        auto got = eval(masked(x)).to_host();
        if (sh.layout().dim_axes(1).empty()) {
          // Rows whole on each device: one kernel, the same bits as on one device.
          CHECK(plan_of(masked(x)).count(plan::StepKind::kernel) == 1);
          CHECK(test::bitwise_equal(got, whole));
        } else {
          for (std::size_t k = 0; k < want.size(); ++k)
            CHECK(std::abs(got[k] - want[k]) <= 4 * std::numeric_limits<float>::epsilon() * std::max(1.0f, want[k]));
        }
      }
    }
  }
  auto x = device_put(vectors.at("causal_softmax_normal s").as<float>(), Shape{16, 16}, NamedSharding(make_mesh({8}, {"x"}), P("x")));
  CHECK_THAT(explain(softmax(where(iota<std::int32_t>(Shape{16, 16}, 0) >= iota<std::int32_t>(Shape{16, 16}, 1), x, ninf))),
             ContainsSubstring("[iota, iota, ge"));
}
