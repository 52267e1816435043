#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "support/data.hpp"
#include "support/meshes.hpp"

using namespace tessel;

TEMPLATE_TEST_CASE("random tensors are the same drawn sharded or whole, on every mesh", "[runtime][random][property]",
                   float, double) {
  auto key = random::fold_in(PRNGKey(7), 3);
  for (auto const& mesh : test::all_meshes()) {
    for (int rank = 1; rank <= 3; ++rank) {
      Shape shape;
      for (int d = 0; d < rank; ++d) shape.push_back(rank == 3 ? 24 : 24 * (rank - d));  // 24 is divisible by every mesh axis product used
      auto whole_u = random::uniform<TestType>(key, shape, TestType(-2), TestType(3)).to_host();
      auto whole_n = random::normal<TestType>(key, shape).to_host();
      for (auto const& spec : test::all_specs(mesh.axes(), rank)) {
        INFO(to_string(mesh) << " " << to_string(spec) << " " << to_string(shape));
        NamedSharding sharding(mesh, spec);
        auto u = random::uniform<TestType>(key, shape, sharding, TestType(-2), TestType(3));
        auto n = random::normal<TestType>(key, shape, sharding);
        REQUIRE(test::shards_match(u, whole_u));
        REQUIRE(test::shards_match(n, whole_n));
        REQUIRE(test::bitwise_equal(n.to_host(), whole_n));
      }
    }
  }
}

TEST_CASE("different keys and split keys give different streams", "[runtime][random]") {
  auto keys = random::split(PRNGKey(0), 3);
  REQUIRE(keys.size() == 3);
  auto a = random::uniform(keys[0], Shape{64}).to_host();
  auto b = random::uniform(keys[1], Shape{64}).to_host();
  CHECK_FALSE(test::bitwise_equal(a, b));
  for (float v : a) {
    CHECK(v >= 0.0f);
    CHECK(v < 1.0f);
  }
}

TEST_CASE("random::split refuses a negative count", "[runtime][random][error]") {
  CHECK_THROWS_WITH(random::split(PRNGKey(0), -1),
                    Catch::Matchers::ContainsSubstring("random::split: num must be non-negative, got -1"));
}
