#include <catch2/catch_test_macros.hpp>

#include "tessel/core/partition_spec.hpp"

using tessel::None;
using tessel::P;

TEST_CASE("PartitionSpec entries are written the way JAX writes them", "[core][spec]") {
  CHECK(P().size() == 0);
  CHECK(P("data").size() == 1);
  CHECK(P("dp", None).size() == 2);
  CHECK(P({}, "mp").size() == 2);
  CHECK(P({}, "mp")[0].replicated());
  CHECK(P(None, "mp") == P({}, "mp"));
  auto both = P({"dp", "mp"}, None);
  REQUIRE(both[0].axes().size() == 2);
  CHECK(both[0].axes()[0].view() == "dp");
  CHECK(both[0].axes()[1].view() == "mp");
  CHECK(both.dim(5).replicated());  // past the end: replicated
  auto one = P({"dp", "mp"});      // one dimension over two axes, not P("dp", "mp")
  REQUIRE(one.size() == 1);
  CHECK(one[0].axes().size() == 2);
  CHECK(P({}).size() == 1);
}

TEST_CASE("PartitionSpec prints like jax.sharding.PartitionSpec", "[core][spec]") {
  CHECK(to_string(P()) == "P()");
  CHECK(to_string(P("data")) == "P('data')");
  CHECK(to_string(P("dp", None)) == "P('dp', None)");
  CHECK(to_string(P({"dp", "mp"}, None, "x")) == "P(('dp', 'mp'), None, 'x')");
}

TEST_CASE("PartitionSpec is a literal type", "[core][spec]") {
  constexpr auto spec = P("dp", None, {"a", "b"});
  static_assert(spec.size() == 3);
  static_assert(spec[0].axes()[0].view() == "dp");
  static_assert(spec[1].replicated());
  static_assert(spec[2].axes().size() == 2);
  SUCCEED();
}
