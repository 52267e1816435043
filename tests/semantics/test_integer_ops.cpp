// int32 arithmetic against jax.numpy / jax.lax on CPU: wrap-around add/sub/mul/neg/abs, true
// division, floor division and remainder with Python's signs, lax.div/rem, and the values XLA
// defines for division by zero and INT_MIN / -1 (computed without trapping), on sharded tensors.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <bit>
#include <cmath>
#include <format>
#include <functional>

#include "semantics/vectors.hpp"

using namespace tessel;
using namespace tessel::test;

namespace {

auto binary_blocks() {
  return read_blocks("int32_binary.txt", "op");
}

// Runs op over the block's pairs on every flat sharding and compares with JAX's results.
template <class R, class Op>
void check_binary(Block const& block, Op op) {
  std::vector<std::int32_t> a, b;
  for (auto const& row : block.rows) a.push_back(i32(row[0])), b.push_back(i32(row[1]));
  auto pa = padded(a, 1), pb = padded(b, 1);
  Shape shape{static_cast<std::int64_t>(pa.size())};
  for (auto const& s : flat_shardings()) {
    INFO(block.header[0] << " on " << to_string(s));
    Tensor<R> r = op(device_put(pa, shape, s), device_put(pb, shape, s));
    auto got = r.to_host();
    for (std::size_t i = 0; i < a.size(); ++i) {
      INFO(a[i] << " " << block.header[0] << " " << b[i]);
      if constexpr (std::is_integral_v<R>) {
        REQUIRE(got[i] == i32(block.rows[i][2]));
      } else {
        float want = f32(block.rows[i][2]);
        if (std::isnan(want)) REQUIRE(std::isnan(got[i]));
        else REQUIRE(std::bit_cast<std::uint32_t>(got[i]) == std::bit_cast<std::uint32_t>(want));
      }
    }
  }
}

}  // namespace

TEST_CASE("int32 binary ops give JAX's values, division by zero and overflow included", "[semantics][int]") {
  auto blocks = binary_blocks();
  using T = Tensor<std::int32_t>;
  std::map<std::string, std::function<T(T const&, T const&)>> ops{
      {"add", [](T const& x, T const& y) -> T { return x + y; }},
      {"sub", [](T const& x, T const& y) -> T { return x - y; }},
      {"mul", [](T const& x, T const& y) -> T { return x * y; }},
      {"floor_divide", [](T const& x, T const& y) -> T { return floor_divide(x, y); }},
      {"remainder", [](T const& x, T const& y) -> T { return x % y; }},
      {"lax_div", [](T const& x, T const& y) -> T { return lax::div(x, y); }},
      {"lax_rem", [](T const& x, T const& y) -> T { return lax::rem(x, y); }},
      {"minimum", [](T const& x, T const& y) -> T { return minimum(x, y); }},
      {"maximum", [](T const& x, T const& y) -> T { return maximum(x, y); }},
      {"pow", [](T const& x, T const& y) -> T { return pow(x, y); }},
  };
  for (auto const& [name, op] : ops) {
    REQUIRE(blocks.count(name) == 1);
    check_binary<std::int32_t>(blocks.at(name), op);
  }
  REQUIRE(blocks.count("true_divide") == 1);
  check_binary<float>(blocks.at("true_divide"), [](T const& x, T const& y) -> Tensor<float> { return x / y; });
  CHECK(blocks.size() == ops.size() + 1);  // every block in the file is checked
}

TEST_CASE("int32 unary ops wrap like XLA", "[semantics][int]") {
  auto blocks = read_blocks("int32_unary.txt", "op");
  using T = Tensor<std::int32_t>;
  std::map<std::string, std::function<T(T const&)>> ops{
      {"neg", [](T const& x) -> T { return -x; }},
      {"abs", [](T const& x) -> T { return abs(x); }},
      {"sign", [](T const& x) -> T { return sign(x); }},
  };
  REQUIRE(blocks.size() == ops.size());
  for (auto const& [name, op] : ops) {
    Block const& block = blocks.at(name);
    std::vector<std::int32_t> a;
    for (auto const& row : block.rows) a.push_back(i32(row[0]));
    auto pa = padded(a, 1);
    for (auto const& s : flat_shardings()) {
      auto got = op(device_put(pa, Shape{static_cast<std::int64_t>(pa.size())}, s)).to_host();
      for (std::size_t i = 0; i < a.size(); ++i) {
        INFO(name << "(" << a[i] << ") on " << to_string(s));
        REQUIRE(got[i] == i32(block.rows[i][1]));
      }
    }
  }
}

TEST_CASE("int32 scalars and types follow JAX", "[semantics][int]") {
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  auto x = device_put(std::vector<std::int32_t>{7, -7, 2147483647, -2147483647 - 1, 0, 5, -5, 1}, Shape{8},
                      NamedSharding(mesh, P({"a", "b"})));
  // `/` is true division, also with a scalar; `//` and `%` round toward -inf.
  static_assert(std::same_as<expr_value_t<decltype(x / 2)>, float>);
  static_assert(std::same_as<expr_value_t<decltype(x % 2)>, std::int32_t>);
  CHECK(Tensor<float>(x / 2).to_host() == std::vector<float>{3.5f, -3.5f, 1073741824.f, -1073741824.f, 0, 2.5f, -2.5f, 0.5f});
  CHECK(Tensor<std::int32_t>(floor_divide(x, 2)).to_host() ==
        std::vector<std::int32_t>{3, -4, 1073741823, -1073741824, 0, 2, -3, 0});
  CHECK(Tensor<std::int32_t>(x % -3).to_host() == std::vector<std::int32_t>{-2, -1, -2, -2, 0, -1, -2, -2});
  // Overflowing sums wrap, in the kernel and in the all-reduce across devices.
  CHECK(Tensor<std::int32_t>(sum(x + 2147483647)).to_host() == std::vector<std::int32_t>{-8});
  CHECK(Tensor<std::int32_t>(sum(x)).to_host() == std::vector<std::int32_t>{0});
  CHECK(Tensor<std::int32_t>(prod(x + 2)).to_host() == std::vector<std::int32_t>{11340});
  // mean of integers is float32, as jnp.mean.
  static_assert(std::same_as<expr_value_t<decltype(mean(x))>, float>);
  CHECK(Tensor<float>(mean(x)).to_host() == std::vector<float>{0.125f});
  // Integer powers by a C++ exponent (lax.integer_pow), and the refusal JAX gives.
  CHECK(Tensor<std::int32_t>(pow(x, 3)).to_host()[0] == 343);
  CHECK_THROWS_WITH(pow(x, -1), "pow: integers cannot be raised to negative powers, got exponent -1");
  // A C++ integer outside int32 is refused (JAX: OverflowError), never wrapped.
  CHECK_THROWS_WITH(x + 3000000000LL,
                    "the C++ integer 3000000000 does not fit in int32, the type a scalar integer takes in an expression "
                    "(JAX refuses such a Python int too); write it as a floating-point constant (3000000000.0)");
}
