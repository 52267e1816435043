// NaN, infinities and signed zeros through every float32 elementwise op and reduction, against
// jax.numpy on CPU, on sharded tensors. NaN results are compared as NaN (XLA's NaN bit patterns
// change from op to op); entries with a subnormal input or result are skipped (XLA:CPU flushes
// them to zero, tessel computes in the default IEEE mode; tests/expr/test_math.cpp covers both).
#include <catch2/catch_test_macros.hpp>

#include <bit>
#include <cmath>
#include <functional>

#include "semantics/vectors.hpp"

using namespace tessel;
using namespace tessel::test;

namespace {

using F = Tensor<float>;

std::uint32_t bits(float x) { return std::bit_cast<std::uint32_t>(x); }

// got matches JAX's want: both NaN, or the same bits (signed zeros and infinities included), or
// within `ulps` units in the last place for the ops XLA computes with a hardware estimate.
bool matches(float got, float want, int ulps = 0) {
  if (std::isnan(want)) return std::isnan(got);
  if (bits(got) == bits(want)) return true;
  if (ulps == 0 || std::isnan(got) || std::isinf(want) || std::signbit(got) != std::signbit(want)) return false;
  return std::abs(static_cast<std::int64_t>(bits(got)) - static_cast<std::int64_t>(bits(want))) <= ulps;
}

F flat(std::vector<float> const& v, NamedSharding const& s) {
  auto p = padded(v, 1.0f);
  return device_put(p, Shape{static_cast<std::int64_t>(p.size())}, s);
}

}  // namespace

TEST_CASE("float32 unary ops on NaN, infinities and signed zeros give JAX's values", "[semantics][float]") {
  auto blocks = read_blocks("float32_special.txt", "unary");
  std::map<std::string, std::function<F(F const&)>> ops{
      {"neg", [](F const& x) -> F { return -x; }},          {"abs", [](F const& x) -> F { return abs(x); }},
      {"relu", [](F const& x) -> F { return relu(x); }},    {"exp", [](F const& x) -> F { return exp(x); }},
      {"log", [](F const& x) -> F { return log(x); }},      {"tanh", [](F const& x) -> F { return tanh(x); }},
      {"sqrt", [](F const& x) -> F { return sqrt(x); }},    {"rsqrt", [](F const& x) -> F { return rsqrt(x); }},
      {"sin", [](F const& x) -> F { return sin(x); }},      {"cos", [](F const& x) -> F { return cos(x); }},
      {"erf", [](F const& x) -> F { return erf(x); }},      {"sigmoid", [](F const& x) -> F { return sigmoid(x); }},
      {"gelu", [](F const& x) -> F { return gelu(x); }},    {"sign", [](F const& x) -> F { return sign(x); }},
      {"floor", [](F const& x) -> F { return floor(x); }},  {"ceil", [](F const& x) -> F { return ceil(x); }},
      {"round", [](F const& x) -> F { return round(x); }},  {"square", [](F const& x) -> F { return square(x); }},
  };
  REQUIRE(blocks.size() == ops.size());
  for (auto const& [name, op] : ops) {
    Block const& block = blocks.at(name);
    std::vector<float> x;
    for (auto const& row : block.rows) x.push_back(f32(row[0]));
    for (auto const& s : flat_shardings()) {
      auto got = op(flat(x, s)).to_host();
      for (std::size_t i = 0; i < x.size(); ++i) {
        float want = f32(block.rows[i][1]);
        if (subnormal(x[i]) || subnormal(want) || subnormal(got[i])) continue;
        INFO(name << "(" << block.rows[i][0] << ") = " << std::hex << bits(got[i]) << ", JAX " << block.rows[i][1]
                  << " on " << to_string(s));
        REQUIRE(matches(got[i], want, name == "rsqrt" ? 2 : 0));
      }
    }
  }
}

TEST_CASE("float32 binary ops and comparisons on NaN, infinities and signed zeros give JAX's values",
          "[semantics][float]") {
  auto blocks = read_blocks("float32_special.txt", "binary");
  std::map<std::string, std::function<F(F const&, F const&)>> ops{
      {"add", [](F const& a, F const& b) -> F { return a + b; }},
      {"sub", [](F const& a, F const& b) -> F { return a - b; }},
      {"mul", [](F const& a, F const& b) -> F { return a * b; }},
      {"div", [](F const& a, F const& b) -> F { return a / b; }},
      {"pow", [](F const& a, F const& b) -> F { return pow(a, b); }},
      {"minimum", [](F const& a, F const& b) -> F { return minimum(a, b); }},
      {"maximum", [](F const& a, F const& b) -> F { return maximum(a, b); }},
      {"floor_divide", [](F const& a, F const& b) -> F { return floor_divide(a, b); }},
      {"remainder", [](F const& a, F const& b) -> F { return a % b; }},
  };
  using I = Tensor<std::int32_t>;
  std::map<std::string, std::function<I(F const&, F const&)>> comparisons{
      {"lt", [](F const& a, F const& b) -> I { return astype<std::int32_t>(a < b); }},
      {"le", [](F const& a, F const& b) -> I { return astype<std::int32_t>(a <= b); }},
      {"gt", [](F const& a, F const& b) -> I { return astype<std::int32_t>(a > b); }},
      {"ge", [](F const& a, F const& b) -> I { return astype<std::int32_t>(a >= b); }},
      {"eq", [](F const& a, F const& b) -> I { return astype<std::int32_t>(equal(a, b)); }},
      {"ne", [](F const& a, F const& b) -> I { return astype<std::int32_t>(not_equal(a, b)); }},
  };
  REQUIRE(blocks.size() == ops.size() + comparisons.size());
  auto inputs = [&](Block const& block) {
    std::pair<std::vector<float>, std::vector<float>> ab;
    for (auto const& row : block.rows) ab.first.push_back(f32(row[0])), ab.second.push_back(f32(row[1]));
    return ab;
  };
  for (auto const& s : flat_shardings()) {
    for (auto const& [name, op] : ops) {
      Block const& block = blocks.at(name);
      auto [a, b] = inputs(block);
      auto got = op(flat(a, s), flat(b, s)).to_host();
      for (std::size_t i = 0; i < a.size(); ++i) {
        float want = f32(block.rows[i][2]);
        if (subnormal(a[i]) || subnormal(b[i]) || subnormal(want) || subnormal(got[i])) continue;
        INFO(name << "(" << block.rows[i][0] << ", " << block.rows[i][1] << ") = " << std::hex << bits(got[i])
                  << ", JAX " << block.rows[i][2] << " on " << to_string(s));
        REQUIRE(matches(got[i], want));
      }
    }
    for (auto const& [name, op] : comparisons) {
      Block const& block = blocks.at(name);
      auto [a, b] = inputs(block);
      auto got = op(flat(a, s), flat(b, s)).to_host();
      for (std::size_t i = 0; i < a.size(); ++i) {
        INFO(name << "(" << block.rows[i][0] << ", " << block.rows[i][1] << ") on " << to_string(s));
        REQUIRE(got[i] == i32(block.rows[i][2]));
      }
    }
  }
}

TEST_CASE("where passes NaN payloads and signed zeros through", "[semantics][float]") {
  auto blocks = read_blocks("float32_special.txt", "select");
  Block const& block = blocks.at("");
  std::vector<float> c, a, b;
  for (auto const& row : block.rows) c.push_back(static_cast<float>(i32(row[0]))), a.push_back(f32(row[1])), b.push_back(f32(row[2]));
  for (auto const& s : flat_shardings()) {
    auto got = F(where(flat(c, s) > 0.5f, flat(a, s), flat(b, s))).to_host();
    for (std::size_t i = 0; i < c.size(); ++i) {
      INFO("where(" << block.rows[i][0] << ", " << block.rows[i][1] << ", " << block.rows[i][2] << ")");
      REQUIRE(bits(got[i]) == bits(f32(block.rows[i][3])));
    }
  }
}

TEST_CASE("float32 reductions propagate NaN and order signed zeros as JAX does, sharded or not",
          "[semantics][float][reduce]") {
  auto blocks = read_blocks("float32_special.txt", "reduce");
  std::map<std::string, std::function<F(F const&)>> ops{
      {"sum", [](F const& x) -> F { return sum(x, 1); }},   {"max", [](F const& x) -> F { return max(x, 1); }},
      {"min", [](F const& x) -> F { return min(x, 1); }},   {"prod", [](F const& x) -> F { return prod(x, 1); }},
      {"mean", [](F const& x) -> F { return mean(x, 1); }},
  };
  REQUIRE(blocks.size() == ops.size() * 5);
  for (auto const& [key, block] : blocks) {
    auto const& op = ops.at(block.header[0]);
    std::int64_t n = std::stol(block.header[1]);
    // Rows padded to a multiple of 24 with rows of ones.
    std::int64_t rows = static_cast<std::int64_t>(block.rows.size());
    std::int64_t padded_rows = (rows + 23) / 24 * 24;
    std::vector<float> x(static_cast<std::size_t>(padded_rows * n), 1.0f);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < n; ++j) x[static_cast<std::size_t>(r * n + j)] = f32(block.rows[static_cast<std::size_t>(r)][static_cast<std::size_t>(j)]);
    Shape shape{padded_rows, n};
    // Rows sharded, and (when n divides) the reduced axis sharded so partial results meet in an all-reduce.
    std::vector<NamedSharding> shardings;
    for (auto const& s : flat_shardings()) shardings.push_back(s);
    auto mesh = make_mesh({2, 4}, {"a", "b"});
    if (n % 4 == 0) shardings.emplace_back(mesh, P("a", "b"));
    if (n % 8 == 0) shardings.emplace_back(mesh, P(None, {"b", "a"}));
    for (auto const& s : shardings) {
      NamedSharding const& placed = s;  // a one-entry spec shards the rows
      auto got = op(device_put(x, shape, placed)).to_host();
      for (std::int64_t r = 0; r < rows; ++r) {
        auto const& row = block.rows[static_cast<std::size_t>(r)];
        float want = f32(row.back());
        float g = got[static_cast<std::size_t>(r)];
        bool any_subnormal = subnormal(want) || subnormal(g);
        double magnitude = 0;
        for (std::int64_t j = 0; j < n; ++j) {
          float v = f32(row[static_cast<std::size_t>(j)]);
          any_subnormal = any_subnormal || subnormal(v);
          magnitude += std::abs(static_cast<double>(v));
        }
        // Known difference: XLA turns a sum over a single element into that element, so a lone -0.0
        // sums to -0.0 there; tessel adds it to the identity +0.0, as XLA does for longer rows.
        bool lone_negative_zero = n == 1 && (block.header[0] == "sum" || block.header[0] == "mean") && want == 0;
        if (any_subnormal || lone_negative_zero) continue;
        INFO(key << " row " << r << ": " << std::hex << bits(g) << ", JAX " << row.back() << " on " << to_string(placed));
        if (std::isnan(want) || std::isinf(want) || block.header[0] == "max" || block.header[0] == "min" || want == 0) {
          // Order does not matter for these: the exact value, signed zero included.
          REQUIRE(matches(g, want));
        } else {
          // Sums and products of random rows are rounded in each plan's own order.
          REQUIRE(std::abs(static_cast<double>(g) - want) <= 1e-6 * (magnitude + std::abs(want)) * n);
        }
      }
    }
  }
}
