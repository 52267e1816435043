// astype against JAX: float -> int32 saturates (NaN -> 0, +-inf and out-of-range values to
// INT_MAX / INT_MIN, truncation toward zero otherwise), int32 -> float32 rounds to nearest even,
// float64 <-> float32 round and overflow as IEEE does; on sharded tensors, with no undefined
// behaviour (the asan preset checks float-cast-overflow).
#include <catch2/catch_test_macros.hpp>

#include <bit>
#include <cmath>
#include <limits>

#include "semantics/vectors.hpp"

using namespace tessel;
using namespace tessel::test;

namespace {

template <class From, class To, class Parse, class Check>
void check_cast(Block const& block, Parse parse, Check check) {
  std::vector<From> x;
  for (auto const& row : block.rows) x.push_back(parse(row[0]));
  auto p = padded(x, From(1));
  for (auto const& s : flat_shardings()) {
    auto got = Tensor<To>(astype<To>(device_put(p, Shape{static_cast<std::int64_t>(p.size())}, s))).to_host();
    for (std::size_t i = 0; i < x.size(); ++i) {
      INFO(block.header[0] << " " << block.rows[i][0] << " -> " << block.header[1] << ": JAX " << block.rows[i][1]
                           << " on " << to_string(s));
      check(x[i], got[i], block.rows[i][1]);
    }
  }
}

// XLA:CPU flushes to zero what is below float32's normal range before rounding.
bool flushed_by_xla(double x) { return x != 0 && std::abs(x) < std::numeric_limits<float>::min(); }

}  // namespace

TEST_CASE("astype saturates float -> int32 and rounds like JAX", "[semantics][cast]") {
  auto blocks = read_blocks("casts.txt", "cast");
  REQUIRE(blocks.size() == 5);
  check_cast<float, std::int32_t>(blocks.at("float32 int32"), f32, [](float x, std::int32_t got, std::string const& want) {
    if (!subnormal(x)) REQUIRE(got == i32(want));
  });
  check_cast<double, std::int32_t>(blocks.at("float64 int32"), f64, [](double, std::int32_t got, std::string const& want) {
    REQUIRE(got == i32(want));
  });
  check_cast<std::int32_t, float>(blocks.at("int32 float32"), i32, [](std::int32_t, float got, std::string const& want) {
    REQUIRE(std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(f32(want)));
  });
  check_cast<float, double>(blocks.at("float32 float64"), f32, [](float x, double got, std::string const& want) {
    if (subnormal(x)) return;
    if (std::isnan(f64(want))) REQUIRE(std::isnan(got));
    else REQUIRE(std::bit_cast<std::uint64_t>(got) == std::bit_cast<std::uint64_t>(f64(want)));
  });
  check_cast<double, float>(blocks.at("float64 float32"), f64, [](double x, float got, std::string const& want) {
    if (flushed_by_xla(x)) return;
    if (std::isnan(f32(want))) REQUIRE(std::isnan(got));
    else REQUIRE(std::bit_cast<std::uint32_t>(got) == std::bit_cast<std::uint32_t>(f32(want)));
  });
}
