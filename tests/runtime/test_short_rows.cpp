// Kernels over many short rows: the host backend walks several rows to a work item and steps each
// leaf's offset from row to row (kernel_eval.hpp's step_row) instead of computing it again. A
// rotary embedding's halves (a slice in a reshaped view, broadcast tables, an iota), a transposed
// leaf beside a broadcast one, and a softmax over short transposed rows (a row-fused reduction per
// row) equal the host computation on every test mesh and spec, where rows wrap over every
// dimension of the iteration space inside one work item.
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "support/data.hpp"
#include "support/meshes.hpp"

using namespace tessel;
using tessel::test::for_each_even_sharding;
using tessel::test::iota_data;

namespace {

constexpr std::int64_t B = 4, S = 10, H = 6, D = 8, half = D / 2;

std::size_t at(std::int64_t b, std::int64_t s, std::int64_t h, std::int64_t d) {
  return static_cast<std::size_t>(((b * S + s) * H + h) * D + d);
}

}  // namespace

TEST_CASE("a rotary embedding's short rows equal the host computation on every mesh and spec", "[runtime][rows]") {
  // x (B, S, H, D) viewed as (B, S, H, 2, half): the kernel's rows are `half` long and the
  // dimension of extent 2 wraps every other row. Small integers: every product and sum is exact.
  Shape const shape{B, S, H, D};
  auto const host = iota_data<float>(shape);
  std::vector<float> cos_host(static_cast<std::size_t>(S * half)), sin_host(cos_host.size());
  for (std::size_t i = 0; i < cos_host.size(); ++i) {
    cos_host[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
    sin_host[i] = static_cast<float>(static_cast<int>(i % 5) + 1);
  }
  std::vector<float> want(host.size());
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t s = 0; s < S; ++s)
      for (std::int64_t h = 0; h < H; ++h)
        for (std::int64_t d = 0; d < half; ++d) {
          float const c = cos_host[static_cast<std::size_t>(s * half + d)], n = sin_host[static_cast<std::size_t>(s * half + d)];
          float const x1 = host[at(b, s, h, d)], x2 = host[at(b, s, h, d + half)];
          want[at(b, s, h, d)] = x1 * c - x2 * n;
          want[at(b, s, h, d + half)] = x2 * c + x1 * n;
        }
  auto rotate = [](auto const& x, auto const& c, auto const& n) {
    Shape const halves{B, S, H, 2, half};
    auto xh = reshape(x, halves);
    auto x1 = slice_in_dim(xh, 0, 1, 3), x2 = slice_in_dim(xh, 1, 2, 3);
    auto cr = reshape(c, {S, 1, 1, half}), nr = reshape(n, {S, 1, 1, half});
    return reshape(where(iota<std::int32_t>(halves, 3) == 0, x1 * cr - x2 * nr, x2 * cr + x1 * nr), {B, S, H, D});
  };
  for_each_even_sharding(shape, [&](NamedSharding const& sh) {
    INFO(to_string(sh.mesh()) << " " << to_string(sh.spec()));
    auto x = device_put(host, shape, sh);
    NamedSharding const replicated(sh.mesh(), P());
    auto c = device_put(cos_host, Shape{S, 1, half}, replicated), n = device_put(sin_host, Shape{S, 1, half}, replicated);
    Tensor<float> y = rotate(x, c, n);
    REQUIRE(y.to_host() == want);
  });
}

TEST_CASE("a transposed leaf beside a broadcast one, over short rows, equals the host computation", "[runtime][rows]") {
  // transpose(x, {0, 2, 1, 3}) (B, H, S, D) walks x with strides that jump at every row; the
  // broadcast table (1, H, 1, D) repeats along two of the row dimensions, the iota counts the third.
  Shape const shape{B, S, H, D};
  auto const host = iota_data<float>(shape);
  std::vector<float> table(static_cast<std::size_t>(H * D));
  for (std::size_t i = 0; i < table.size(); ++i) table[i] = static_cast<float>(i % 11);
  std::vector<float> want;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t s = 0; s < S; ++s)
        for (std::int64_t d = 0; d < D; ++d)
          want.push_back(host[at(b, s, h, d)] * table[static_cast<std::size_t>(h * D + d)] + static_cast<float>(s));
  for_each_even_sharding(shape, [&](NamedSharding const& sh) {
    INFO(to_string(sh.mesh()) << " " << to_string(sh.spec()));
    auto x = device_put(host, shape, sh);
    auto t = device_put(table, Shape{1, H, 1, D}, NamedSharding(sh.mesh(), P()));
    Tensor<float> y = transpose(x, {0, 2, 1, 3}) * t + astype<float>(iota<std::int32_t>(Shape{B, H, S, D}, 2));
    REQUIRE(y.to_host() == want);
  });
}

TEST_CASE("a softmax over short transposed rows equals the host softmax on every mesh and spec", "[runtime][rows]") {
  // Each row's max and sum are reduced inside the kernel (row-fused): stepping to the next row
  // reduces it again.
  Shape const shape{B, S, H, D};
  std::vector<float> host(static_cast<std::size_t>(shape.num_elements()));
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>(static_cast<int>(i * 7 % 23)) * 0.25f;
  std::vector<double> want;
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t h = 0; h < H; ++h)
      for (std::int64_t s = 0; s < S; ++s) {
        double m = -1e30, sum = 0;
        for (std::int64_t d = 0; d < D; ++d) m = std::max(m, double{host[at(b, s, h, d)]});
        for (std::int64_t d = 0; d < D; ++d) sum += std::exp(double{host[at(b, s, h, d)]} - m);
        for (std::int64_t d = 0; d < D; ++d) want.push_back(std::exp(double{host[at(b, s, h, d)]} - m) / sum);
      }
  for_each_even_sharding(shape, [&](NamedSharding const& sh) {
    INFO(to_string(sh.mesh()) << " " << to_string(sh.spec()));
    auto x = device_put(host, shape, sh);
    Tensor<float> y = softmax(transpose(x, {0, 2, 1, 3}), -1);
    auto got = y.to_host();
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("element " << i << ": " << got[i] << " vs " << want[i]);
      REQUIRE(std::abs(got[i] - want[i]) <= 1e-6 * (1.0 + want[i]));
    }
  });
}
