// argmax / argmin: against JAX (tests/data/jax_ops/argminmax.txt: ties, NaNs, infinities, int32),
// bit for bit on every test mesh and sharding, the reduced axis split or not.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "support/data.hpp"
#include "support/jax_tensors.hpp"
#include "support/meshes.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using Catch::Matchers::ContainsSubstring;

namespace {

template <class T>
std::vector<std::int32_t> run(std::string const& which, Tensor<T> const& x) {
  if (which == "out_argmax_axis0") return eval(argmax(x, 0)).to_host();
  if (which == "out_argmax_axis1") return eval(argmax(x, 1)).to_host();
  if (which == "out_argmax_all") return eval(argmax(x)).to_host();
  if (which == "out_argmin_axis0") return eval(argmin(x, 0)).to_host();
  if (which == "out_argmin_axis1") return eval(argmin(x, 1)).to_host();
  return eval(argmin(x)).to_host();
}

}  // namespace

TEST_CASE("argmax and argmin match JAX on every mesh and sharding", "[expr][arg_reduce]") {
  auto v = test::read_jax_tensors("argminmax.txt");
  for (std::string c : {"argminmax_f32_special_rows", "argminmax_f32_special_cols", "argminmax_f32_ties",
                        "argminmax_f32_nan_multi", "argminmax_f32_neginf", "argminmax_f32_all_neginf",
                        "argminmax_f32_all_nan", "argminmax_i32"}) {
    auto const& x = v.at(c + " x");
    for (std::string which : {"out_argmax_axis0", "out_argmax_axis1", "out_argmax_all", "out_argmin_axis0",
                              "out_argmin_axis1", "out_argmin_all"}) {
      auto want = v.at(c + " " + which).as<std::int32_t>();
      for (auto const& mesh : test::all_meshes()) {
        for (auto const& s : test::shardings_of(mesh, x.shape)) {
          INFO(c << " " << which << " " << to_string(mesh) << " " << to_string(s.spec()));
          if (x.dtype == "int32") CHECK(run(which, device_put(x.as<std::int32_t>(), x.shape, s)) == want);
          else CHECK(run(which, device_put(x.as<float>(), x.shape, s)) == want);
        }
      }
    }
  }
}

TEST_CASE("argmax over a sharded axis: two all-reduces, values then indices; keepdims keeps the shape", "[expr][arg_reduce]") {
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  auto x = device_put(test::iota_data<float>(Shape{16, 32}), Shape{16, 32}, NamedSharding(mesh, P("a", "b")));
  auto const& p = plan_of(argmax(x, 1));
  INFO(explain(argmax(x, 1)));
  CHECK(p.count(plan::Collective::all_reduce) == 1);
  CHECK(p.count(plan::Collective::all_gather) == 0);
  CHECK_THAT(explain(argmax(x, 1)), ContainsSubstring("all-reduce argmax over mesh axes ('b') (groups of 4)"));
  CHECK(eval(argmax(x, 1, true)).shape() == Shape{16, 1});
  auto last = std::vector<std::int32_t>(16, 31);
  CHECK(eval(argmax(x, 1)).to_host() == last);
  CHECK(eval(argmin(x * -1.0f, 1)).to_host() == last);
  CHECK(eval(argmax(x)).to_host() == std::vector<std::int32_t>{16 * 32 - 1});
}

TEST_CASE("argmax names a bad axis", "[expr][arg_reduce]") {
  auto x = device_put(test::iota_data<float>(Shape{4, 6}), Shape{4, 6}, NamedSharding(make_mesh({8}, {"x"}), P()));
  CHECK_THROWS_WITH(argmax(x, 2), ContainsSubstring("argmax: axis 2 is out of range for shape (4, 6)"));
  CHECK_THROWS_WITH(argmin(x, -3), ContainsSubstring("argmin: axis -3 is out of range"));
}
