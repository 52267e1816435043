#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "support/data.hpp"
#include "support/meshes.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace tessel;

TEMPLATE_TEST_CASE("device_put places each block on exactly its devices, and gathers back bitwise",
                   "[runtime][device_put][property]", float, double, std::int32_t) {
  for (auto const& mesh : test::all_meshes()) {
    for (int rank = 1; rank <= 3; ++rank) {
      Shape shape;
      for (int d = 0; d < rank; ++d) shape.push_back(rank == 3 ? 24 : 24 * (rank - d));  // 24 is divisible by every mesh axis product used
      auto data = test::iota_data<TestType>(shape, TestType(1));
      for (auto const& spec : test::all_specs(mesh.axes(), rank)) {
        INFO(to_string(mesh) << " " << to_string(spec) << " " << to_string(shape));
        NamedSharding sharding(mesh, spec);
        auto x = device_put(data, shape, sharding);
        REQUIRE(x.sharding() == sharding);
        auto shards = x.addressable_shards();
        auto expected = sharding.devices_indices_map(shape);
        REQUIRE(shards.size() == expected.size());
        for (std::size_t i = 0; i < shards.size(); ++i) {
          REQUIRE(shards[i].device == expected[i].first);
          REQUIRE(shards[i].index == expected[i].second);
        }
        REQUIRE(test::shards_match(x, data));
        REQUIRE(test::bitwise_equal(x.to_host(), data));
      }
    }
  }
}

TEST_CASE("the tutorial's placement: (128, 4) rows over 8 devices", "[runtime][device_put]") {
  auto mesh = make_mesh({8}, {"data"});
  Shape shape{128, 4};
  auto data = test::iota_data<float>(shape);
  auto x = device_put(data, shape, NamedSharding(mesh, P("data")));
  auto shards = x.addressable_shards();
  REQUIRE(shards.size() == 8);
  CHECK(shards[7].device == 7);
  CHECK(to_string(shards[7].index) == "[112:128, 0:4]");
  CHECK(shards[7].shape == Shape{16, 4});
}

TEST_CASE("make_array_from_callback builds shard by shard, once per distinct block", "[runtime][device_put]") {
  for (auto const& mesh : test::all_meshes()) {
    Shape shape{48, 24};
    auto data = test::iota_data<double>(shape);
    for (auto const& spec : test::all_specs(mesh.axes(), 2)) {
      NamedSharding sharding(mesh, spec);
      int calls = 0;
      auto x = make_array_from_callback<double>(shape, sharding, [&](Box const& index, std::span<double> block) {
        ++calls;
        for (std::size_t i = 0; i < block.size(); ++i)
          block[i] = test::element_at(data, shape, index, static_cast<std::int64_t>(i));
      });
      REQUIRE(calls * sharding.layout().replication() == mesh.num_devices());
      REQUIRE(test::shards_match(x, data));
      REQUIRE(test::bitwise_equal(x.to_host(), data));
    }
  }
}

TEST_CASE("device_put refuses host data of the wrong size or dtype", "[runtime][device_put][error]") {
  auto mesh = make_mesh({8}, {"data"});
  NamedSharding s(mesh, P("data"));
  std::vector<float> short_data(500);
  CHECK_THROWS_WITH(device_put(short_data, Shape{128, 4}, s),
                    ContainsSubstring("device_put: host data has 500 elements but shape (128, 4) needs 512"));
  std::vector<double> doubles(512);
  CHECK_THROWS_WITH(device_put<float>(doubles, Shape{128, 4}, s),
                    ContainsSubstring("device_put: host data is float64 but the tensor is float32"));
  auto x = device_put(test::iota_data<float>(Shape{128, 4}), Shape{128, 4}, s);
  std::vector<float> out(100);
  CHECK_THROWS_WITH(x.copy_to_host(out), ContainsSubstring("copy_to_host: host data has 100 elements but shape (128, 4) needs 512"));
}

TEST_CASE("device_put splits an uneven dimension into blocks of ceil(n/k), the last short or empty",
          "[runtime][device_put][uneven]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  auto data = test::iota_data<float>(Shape{10, 4});
  auto x = device_put(data, Shape{10, 4}, NamedSharding(mesh, P("dp")));
  std::vector<std::int64_t> rows;
  for (auto const& s : x.addressable_shards()) {
    CHECK(s.shape == s.index.extent());
    CHECK(static_cast<std::int64_t>(s.data.size()) == s.shape.num_elements());
    rows.push_back(s.shape[0]);
  }
  CHECK(rows == std::vector<std::int64_t>{3, 3, 3, 3, 3, 3, 1, 1});  // (replicated over 'mp')
  CHECK(test::shards_match(x, data));
  CHECK(test::bitwise_equal(x.to_host(), data));
  // 10 rows over 8 devices: blocks of 2, so the last three devices hold nothing.
  auto y = device_put(data, Shape{10, 4}, NamedSharding(mesh, P({"dp", "mp"})));
  auto shards = y.addressable_shards();
  CHECK(to_string(shards[4].index) == "[8:10, 0:4]");
  CHECK(to_string(shards[5].index) == "[10:10, 0:4]");
  CHECK(shards[7].shape == Shape{0, 4});
  CHECK(test::shards_match(y, data));
  CHECK(test::bitwise_equal(y.to_host(), data));
}

TEST_CASE("device_put refuses a spec longer than the shape's rank", "[runtime][device_put][error]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  auto data = test::iota_data<float>(Shape{10, 4});
  CHECK_THROWS_WITH(device_put(data, Shape{10, 4}, NamedSharding(mesh, P(None, None, "mp"))),
                    ContainsSubstring("has 3 entries but the tensor of shape (10, 4) has rank 2"));
}

TEST_CASE("a tensor without a sharding lives on device 0, like an uncommitted jax.Array", "[runtime][device_put]") {
  auto data = test::iota_data<std::int32_t>(Shape{6, 5});
  auto x = device_put(data, Shape{6, 5});
  REQUIRE(x.addressable_shards().size() == 1);
  CHECK(x.addressable_shards()[0].device == 0);
  CHECK(test::bitwise_equal(x.to_host(), data));
}
