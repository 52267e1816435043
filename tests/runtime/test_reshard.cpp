#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "support/data.hpp"
#include "support/meshes.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace tessel;

TEST_CASE("resharding between any two shardings preserves values", "[runtime][reshard][property]") {
  for (auto const& mesh : test::all_meshes()) {
    for (int rank = 1; rank <= 3; ++rank) {
      Shape shape;
      for (int d = 0; d < rank; ++d) shape.push_back(rank == 3 ? 24 : 24 * (d + 1));  // 24 is divisible by every mesh axis product used
      auto data = test::iota_data<float>(shape, 0.5f);
      auto specs = test::all_specs(mesh.axes(), rank);
      // Every spec to several others (a fixed stride through the list covers all kinds of pairs:
      // gathers, splits, transposed axes, axis moves between dimensions).
      for (std::size_t i = 0; i < specs.size(); ++i) {
        auto x = device_put(data, shape, NamedSharding(mesh, specs[i]));
        for (std::size_t step : {std::size_t{1}, std::size_t{5}, std::size_t{13}, specs.size() / 2}) {
          NamedSharding target(mesh, specs[(i + step) % specs.size()]);
          INFO(to_string(mesh) << " " << to_string(specs[i]) << " -> " << to_string(target.spec()));
          auto y = device_put(x, target);
          REQUIRE(y.sharding() == target);
          REQUIRE(test::shards_match(y, data));
          REQUIRE(test::bitwise_equal(y.to_host(), data));
        }
        REQUIRE(test::shards_match(x, data));  // the source is untouched
      }
    }
  }
}

TEST_CASE("resharding between meshes over the same devices, and from one device", "[runtime][reshard]") {
  Shape shape{64, 16};
  auto data = test::iota_data<double>(shape);
  auto flat = make_mesh({8}, {"data"});
  auto grid = make_mesh({4, 2}, {"dp", "mp"});
  auto x = device_put(data, shape, NamedSharding(flat, P("data")));
  auto y = device_put(x, NamedSharding(grid, P("mp", "dp")));
  CHECK(test::shards_match(y, data));
  auto z = device_put(device_put(data, shape), NamedSharding(grid, P(None, {"dp", "mp"})));
  CHECK(test::shards_match(z, data));
}

TEST_CASE("resharding to the same sharding returns the same tensor", "[runtime][reshard]") {
  auto mesh = make_mesh({8}, {"data"});
  auto x = device_put(test::iota_data<float>(Shape{16}), Shape{16}, NamedSharding(mesh, P("data")));
  auto y = device_put(x, NamedSharding(mesh, P("data", None)));  // equivalent spec
  CHECK(&y.impl() == &x.impl());
}

TEST_CASE("resharding refuses a sharding on other devices and leaves the tensor as it was",
          "[runtime][reshard][error]") {
  Shape shape{16, 6};
  auto data = test::iota_data<float>(shape);
  auto low = make_mesh({4}, {"x"}, {0, 1, 2, 3});
  auto high = make_mesh({4}, {"x"}, {4, 5, 6, 7});
  auto x = device_put(data, shape, NamedSharding(low, P("x")));
  CHECK_THROWS_WITH(device_put(x, NamedSharding(high, P("x"))),
                    ContainsSubstring("the tensor is on Mesh('x': 4; devices [0 1 2 3]) but the target sharding "
                                      "NamedSharding(mesh=('x': 4), spec=P('x')) is on Mesh('x': 4; devices [4 5 6 7])"));
  CHECK(x.sharding() == NamedSharding(low, P("x")));
  CHECK(test::shards_match(x, data));
  CHECK(test::bitwise_equal(x.to_host(), data));
}
