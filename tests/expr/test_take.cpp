// take / embedding lookup: against jnp.take (tests/data/jax_ops, default mode: negatives wrap once,
// out of range fills), and sharded against unsharded, bit for bit, on every test mesh: indices
// sharded like a batch, the table split over its vocabulary (a masked local lookup, then an
// all-reduce) or over its features (no collective).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "support/data.hpp"
#include "support/jax_tensors.hpp"
#include "support/meshes.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using Catch::Matchers::ContainsSubstring;

namespace {

NamedSharding one_device() { return NamedSharding(make_mesh({1}, {"x"}, {0}), P()); }

}  // namespace

TEST_CASE("take matches jnp.take for in-range, negative and out-of-range indices", "[expr][take]") {
  auto v = test::read_jax_tensors("take.txt");
  for (std::string c : {"take_t16x8_i6", "take_t16x8_i3x4", "take_t32x4_i6", "take_t32x4_i3x4", "take_t16x8_negative_i6",
                        "take_t32x4_negative_i3x4", "take_t16x8_oob_i3x4", "take_t32x4_oob_i6"}) {
    INFO(c);
    auto const& t = v.at(c + " table");
    auto const& i = v.at(c + " indices");
    auto want = v.at(c + " out").as<float>();
    auto table = device_put(t.as<float>(), t.shape, one_device());
    auto indices = device_put(i.as<std::int32_t>(), i.shape, one_device());
    auto whole = eval(take(table, indices));
    CHECK(whole.shape() == Shape(v.at(c + " out").shape));
    CHECK(test::bitwise_equal(whole.to_host(), want));
    // Every sharding of the table and of the indices, on every mesh: the same bits.
    for (auto const& mesh : test::all_meshes()) {
      for (auto const& ts : test::shardings_of(mesh, t.shape)) {
        for (auto const& is : test::shardings_of(mesh, i.shape)) {
          INFO(to_string(mesh) << " table " << to_string(ts.spec()) << " indices " << to_string(is.spec()));
          auto got = eval(take(device_put(t.as<float>(), t.shape, ts), device_put(i.as<std::int32_t>(), i.shape, is)));
          CHECK(test::bitwise_equal(got.to_host(), want));
        }
      }
    }
  }
  auto m = test::read_jax_tensors("take_modes.txt");
  auto const& idx = m.at("take_modes indices");
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  for (auto const& ts : {one_device(), NamedSharding(mesh, P("b")), NamedSharding(mesh, P({"a", "b"}))}) {
    INFO(to_string(ts.spec()));
    auto indices = device_put(idx.as<std::int32_t>(), idx.shape, one_device());
    CHECK(test::bitwise_equal(
        eval(take(device_put(m.at("take_modes table").as<float>(), Shape{16, 2}, ts), indices)).to_host(),
        m.at("take_modes out_default").as<float>()));
    CHECK(test::bitwise_equal(
        eval(take(device_put(m.at("take_modes itable").as<std::int32_t>(), Shape{16, 2}, ts), indices)).to_host(),
        m.at("take_modes iout_default").as<std::int32_t>()));
  }
}

TEST_CASE("take along other axes and from computed tables", "[expr][take]") {
  auto mesh = make_mesh({2, 2, 2}, {"a", "b", "c"});
  Shape ts{4, 6, 8};
  auto host = test::iota_data<float>(ts);
  std::vector<std::int32_t> ids{5, -1, 0, 2, 7, -7};  // 7 and -7 are out of range for axis 1 (6)
  for (int axis = 0; axis < 3; ++axis) {
    auto whole = eval(take(exp(device_put(host, ts, one_device()) * 0.01f), device_put(ids, Shape{2, 3}, one_device()), axis)).to_host();
    for (auto const& s : test::shardings_of(mesh, ts)) {
      INFO("axis " << axis << " table " << to_string(s.spec()));
      auto got = eval(take(exp(device_put(host, ts, s) * 0.01f), device_put(ids, Shape{2, 3}, NamedSharding(mesh, P("c"))), axis));
      CHECK(test::bitwise_equal(got.to_host(), whole));
    }
  }
}

TEST_CASE("a vocab-parallel embedding is a masked lookup and one all-reduce; a feature-sharded one has none",
          "[expr][take][plan]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  auto ids = device_put(std::vector<std::int32_t>{1, 3, 5, 7, 9, 11, 13, 15}, Shape{8}, NamedSharding(mesh, P("dp")));
  auto vocab = device_put(test::iota_data<float>(Shape{16, 4}), Shape{16, 4}, NamedSharding(mesh, P("mp")));
  auto features = device_put(test::iota_data<float>(Shape{16, 4}), Shape{16, 4}, NamedSharding(mesh, P(None, "mp")));
  auto const& pv = plan_of(take(vocab, ids));
  INFO(explain(take(vocab, ids)));
  CHECK(pv.count(plan::Collective::all_reduce) == 1);
  CHECK(pv.count(plan::Collective::all_gather) == 0);
  CHECK_THAT(explain(take(vocab, ids)), ContainsSubstring("all-reduce sum over mesh axes ('mp') (groups of 2)"));
  CHECK(eval(take(vocab, ids)).sharding() == NamedSharding(mesh, P("dp")));
  auto const& pf = plan_of(take(features, ids));
  INFO(explain(take(features, ids)));
  CHECK(pf.count(plan::Collective::all_reduce) == 0);
  CHECK(pf.count(plan::Collective::all_gather) == 0);
  CHECK(eval(take(features, ids)).sharding() == NamedSharding(mesh, P("dp", "mp")));
}

TEST_CASE("take names a bad axis and a result of too high a rank", "[expr][take]") {
  auto t = device_put(test::iota_data<float>(Shape{4, 6}), Shape{4, 6}, one_device());
  auto i = device_put(std::vector<std::int32_t>(1, 0), Shape{1, 1, 1, 1, 1, 1, 1, 1}, one_device());
  CHECK_THROWS_WITH(take(t, device_put(std::vector<std::int32_t>{0}, Shape{1}, one_device()), 2),
                    ContainsSubstring("take: axis 2 is out of range for shape (4, 6) of rank 2"));
  CHECK_THROWS_WITH(take(t, i), ContainsSubstring("take: a table of shape (4, 6) and indices of shape (1, 1, 1, 1, 1, 1, 1, 1) give a result of rank 9, more than 8"));
}
