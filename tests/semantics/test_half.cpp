// bfloat16 and float16 (core/half.hpp): conversions, storage, elementwise ops computed in float
// and rounded once when stored, reductions accumulating in float, on every semantics mesh.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tessel/tessel.hpp"
#include "vectors.hpp"

using namespace tessel;

namespace {

template <class H>
std::vector<H> halves(std::vector<float> const& v) {
  std::vector<H> out;
  for (float f : v) out.push_back(H(f));
  return out;
}

template <class H>
std::vector<std::uint16_t> bits(std::vector<H> const& v) {
  std::vector<std::uint16_t> out;
  for (H h : v) out.push_back(h.bits);
  return out;
}

}  // namespace

TEST_CASE("bfloat16 and float16 round to nearest even and keep special values", "[half]") {
  CHECK(bfloat16(1.0f).bits == 0x3f80);
  CHECK(bfloat16(std::bit_cast<float>(0x3f808000u)).bits == 0x3f80);  // a tie: to even
  CHECK(bfloat16(std::bit_cast<float>(0x3f818000u)).bits == 0x3f82);  // a tie: to even (up)
  CHECK(bfloat16(std::bit_cast<float>(0x3f808001u)).bits == 0x3f81);
  CHECK(bfloat16(std::numeric_limits<float>::infinity()).bits == 0x7f80);
  CHECK(bfloat16(-0.0f).bits == 0x8000);
  CHECK(bfloat16(std::bit_cast<float>(0x7f7fffffu)).bits == 0x7f80);  // float32 max rounds to inf
  CHECK(bfloat16(std::bit_cast<float>(0xff800001u)).bits == 0xffc0);  // a signalling NaN: quiet, sign kept
  CHECK(float16(1.0f).bits == 0x3c00);
  CHECK(float16(65504.0f).bits == 0x7bff);
  CHECK(float16(65519.0f).bits == 0x7bff);
  CHECK(float16(65520.0f).bits == 0x7c00);
  CHECK(float16(std::ldexp(1.0f, -24)).bits == 0x0001);
  CHECK(float16(std::ldexp(1.0f, -25)).bits == 0x0000);           // a tie with zero: to even
  CHECK(float16(std::ldexp(1.5f, -25)).bits == 0x0001);
  CHECK(float16(std::ldexp(3.0f, -25)).bits == 0x0002);           // 1.5 subnormal units: to even
  CHECK(float16(std::bit_cast<float>(0x7f800001u)).bits == 0x7e00);
  // Every 16-bit pattern widens to float and back unchanged (NaNs: quieted).
  for (std::uint32_t b = 0; b < 0x10000; ++b) {
    auto h = float16::from_bits(static_cast<std::uint16_t>(b));
    auto back = float16(static_cast<float>(h)).bits;
    bool nan = (b & 0x7c00) == 0x7c00 && (b & 0x3ff);
    REQUIRE(back == (nan ? (b | 0x200) : b));
    auto g = bfloat16::from_bits(static_cast<std::uint16_t>(b));
    bool bnan = (b & 0x7f80) == 0x7f80 && (b & 0x7f);
    REQUIRE(bfloat16(static_cast<float>(g)).bits == (bnan ? (b | 0x40) : b));
  }
}

TEST_CASE("half-precision tensors: storage, elementwise ops in float, reductions, on every mesh", "[half]") {
  std::vector<float> xs, ys;
  for (int i = 0; i < 37; ++i) {
    xs.push_back(std::sin(0.37f * static_cast<float>(i)) * 3.0f);
    ys.push_back(std::cos(0.21f * static_cast<float>(i)) + 0.5f);
  }
  Shape shape{37};
  auto hx = halves<bfloat16>(xs), hy = halves<bfloat16>(ys);
  Tensor<bfloat16> x1 = device_put(hx, shape), y1 = device_put(hy, shape);
  // The chain computed in float from the rounded inputs, rounded once at the end.
  std::vector<std::uint16_t> want;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    float a = static_cast<float>(hx[i]), b = static_cast<float>(hy[i]);
    want.push_back(bfloat16(a * b + 2.0f * a).bits);
  }
  for (auto const& s : test::flat_shardings()) {
    INFO(to_string(s));
    auto x = device_put(hx, shape, s), y = device_put(hy, shape, s);
    REQUIRE(bits(x.to_host()) == bits(hx));
    Tensor<bfloat16> z = x * y + x * 2.0f;
    static_assert(std::same_as<decltype(z)::value_type, bfloat16>);
    CHECK(bits(z.to_host()) == want);
    Tensor<float> f = astype<float>(x);
    CHECK(f.to_host() == std::vector<float>(hx.begin(), hx.end()));
    Tensor<float16> h = astype<float16>(x);
    CHECK(bits(Tensor<bfloat16>(astype<bfloat16>(h)).to_host()) == bits(hx));
    Tensor<bfloat16> total = sum(x);
    float acc = 0;
    for (auto v : hx) acc += static_cast<float>(v);
    CHECK(std::abs(static_cast<float>(total.to_host()[0]) - acc) <= 0.02f * std::abs(acc) + 0.02f);
  }
  static_assert(std::same_as<promote_t<bfloat16, float16>, float>);
  static_assert(std::same_as<promote_t<std::int32_t, bfloat16>, bfloat16>);
  static_assert(std::same_as<promote_t<bfloat16, Weak<double>>, bfloat16>);
  static_assert(std::same_as<promote_t<float16, float>, float>);
}
