// tessel::fast_math (expr/fast_math.hpp): the error bounds its header states, checked against the
// functions evaluated in double over a dense sweep of float32 bit patterns (every binade, both
// signs: subnormals, tiny and huge values alike) plus the edge cases (+-0, +-inf, NaN, the
// overflow and underflow thresholds); and the fast ops in tensors: the same values as the scalar
// functions, sharded or not, and visible in explain.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "support/meshes.hpp"
#include "tessel/expr/fast_math.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;

namespace {

// Every 61st bit pattern (70 million floats, ~86,000 per binade and sign), then the edge cases.
// The bounds are the optimized presets' to check; under the sanitizers (unoptimized, and memory
// and UB are what they look for) every 6007th pattern still visits every binade and sign, in
// 1/100 of the time.
#ifdef TESSEL_TEST_SANITIZED
constexpr std::uint64_t sweep_stride = 6007;
#else
constexpr std::uint64_t sweep_stride = 61;
#endif
std::vector<float> sweep() {
  std::vector<float> xs;
  xs.reserve((std::uint64_t{1} << 32) / sweep_stride + 64);
  for (std::uint64_t b = 0; b < (std::uint64_t{1} << 32); b += sweep_stride)
    xs.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(b)));
  float const inf = std::numeric_limits<float>::infinity();
  for (float x : {0.0f, -0.0f, inf, -inf, std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min(),
                  -std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::min(), -std::numeric_limits<float>::min(),
                  std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(), 88.72283f, 88.7228394f, 88.7229f,
                  88.3762626f, -87.3365479f, -87.6f, -87.7f, -103.9f, -104.0f, 1e-30f, -1e-30f, 0.25f, -0.25f, 0.2499999f,
                  -0.2499999f, 1e-4f, 20.0f, -20.0f, 9.0f, -9.0f, 1e20f, -1e20f, 1e13f, -1e13f})
    xs.push_back(x);
  return xs;
}

struct Bound {
  double rel;          // |got - exact| <= rel * |exact| + per_x * |x| ...
  double abs_min;      // ... or <= abs_min (where |exact| is that small the relative bound does not apply)
  double per_x = 0.0;
};

// Checks f against exact over xs: NaN where exact is NaN, equal infinities, finite values within
// the bound. Returns the largest error seen as a fraction of the bound (where it applies).
template <class F, class Exact>
double check(char const* name, std::vector<float> const& xs, F f, Exact exact, Bound bound) {
  std::vector<float> got(xs.size());
  // A plain loop, as the kernels run the functions (vectorized).
  for (std::size_t i = 0; i < xs.size(); ++i) got[i] = f(xs[i]);
  double worst = 0;
  std::size_t failures = 0;
  std::string first;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    double const want = exact(static_cast<double>(xs[i]));
    double const g = got[i];
    bool ok;
    if (std::isnan(want)) {
      ok = std::isnan(g);
    } else if (std::isinf(want) || std::abs(want) > std::numeric_limits<float>::max()) {
      ok = g == static_cast<float>(want) || (std::isinf(g) && std::signbit(g) == std::signbit(want));
    } else {
      double const err = std::abs(g - want);
      double const allowed = bound.rel * std::abs(want) + bound.per_x * std::abs(static_cast<double>(xs[i]));
      ok = std::isfinite(g) && (err <= allowed || err <= bound.abs_min);
      if (err > bound.abs_min) worst = std::max(worst, err / allowed);
    }
    if (!ok && failures++ == 0)
      first = std::string(name) + "(" + std::to_string(xs[i]) + " = " + std::to_string(std::bit_cast<std::uint32_t>(xs[i])) +
              " bits) = " + std::to_string(g) + ", exact " + std::to_string(want);
  }
  INFO(first);
  CHECK(failures == 0);
  return worst;
}

double exact_gelu(double x) {
  // x (1 + tanh(u)) / 2 written as x / (1 + exp(-2u)), which does not cancel for large negative x.
  double const u = 0.7978845608028654 * (x + 0.044715 * x * x * x);
  if (std::isinf(x)) return x > 0 ? x : std::numeric_limits<double>::quiet_NaN();  // as JAX: -inf * 0
  return x / (1.0 + std::exp(-2.0 * u));
}

}  // namespace

TEST_CASE("fast_math functions stay within their stated error bounds", "[expr][fast_math]") {
  auto const xs = sweep();
  double const flush = std::ldexp(1.0, -125);
  double worst = check("exp", xs, [](float x) { return math::fast::exp(x); }, [](double x) { return std::exp(x); }, {4e-7, flush});
  WARN("exp: largest error / bound " << worst);
  // exp_nonpositive is exp for x <= 0 (and NaN).
  std::vector<float> nonpositive;
  for (float x : xs)
    if (!(x > 0)) nonpositive.push_back(x);
  worst = check("exp_nonpositive", nonpositive, [](float x) { return math::fast::exp_nonpositive(x); },
                [](double x) { return std::exp(x); }, {4e-7, flush});
  WARN("exp_nonpositive: largest error / bound " << worst);
  worst = check("sigmoid", xs, [](float x) { return math::fast::sigmoid(x); },
                [](double x) { return 1.0 / (1.0 + std::exp(-x)); }, {5e-7, std::ldexp(1.0, -124)});
  WARN("sigmoid: largest error / bound " << worst);
  worst = check("tanh", xs, [](float x) { return math::fast::tanh(x); }, [](double x) { return std::tanh(x); }, {1e-6, 0});
  WARN("tanh: largest error / bound " << worst);
  worst = check("gelu", xs, [](float x) { return math::fast::gelu(x); }, exact_gelu, {5e-7, std::ldexp(1.0, -120), 6e-8});
  WARN("gelu: largest error / bound " << worst);

  // The special values exactly.
  float const inf = std::numeric_limits<float>::infinity();
  CHECK(math::fast::exp(inf) == inf);
  CHECK(math::fast::exp(-inf) == 0.0f);
  CHECK(math::fast::exp(88.7229f) == inf);
  CHECK(math::fast::exp(0.0f) == 1.0f);
  CHECK(std::isnan(math::fast::exp(std::numeric_limits<float>::quiet_NaN())));
  CHECK(math::fast::tanh(inf) == 1.0f);
  CHECK(math::fast::tanh(-inf) == -1.0f);
  CHECK(std::signbit(math::fast::tanh(-0.0f)));
  CHECK(math::fast::gelu(inf) == inf);
  CHECK(std::isnan(math::fast::gelu(-inf)));
  CHECK(math::fast::sigmoid(-inf) == 0.0f);
  CHECK(math::fast::sigmoid(inf) == 1.0f);
}

TEST_CASE("fast_math ops in tensors: the scalar functions' values, sharded or not, named in explain", "[expr][fast_math]") {
  std::int64_t const rows = 96, cols = 300;  // rows: divisible by every test mesh's axes  // cols: not a multiple of any vector width
  std::vector<float> host(rows * cols);
  for (std::size_t i = 0; i < host.size(); ++i) host[i] = static_cast<float>((static_cast<double>(i % 977) - 488) / 37.0);
  host[5] = std::numeric_limits<float>::infinity();
  host[7] = -std::numeric_limits<float>::infinity();
  host[11] = std::numeric_limits<float>::quiet_NaN();
  for (auto const& mesh : test::all_meshes()) {
    NamedSharding s(mesh, P(mesh.axes().name(0).view(), None));
    INFO(to_string(s));
    auto x = device_put(host, {rows, cols}, s);
    auto g = eval(fast_math::gelu(x)).to_host();
    auto t = eval(fast_math::tanh(x)).to_host();
    auto e = eval(fast_math::exp(x)).to_host();
    auto sg = eval(fast_math::sigmoid(x)).to_host();
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < host.size(); ++i) {
      auto same = [](float a, float b) { return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b) || (std::isnan(a) && std::isnan(b)); };
      mismatches += !same(g[i], math::fast::gelu(host[i])) + !same(t[i], math::fast::tanh(host[i])) +
                    !same(e[i], math::fast::exp(host[i])) + !same(sg[i], math::fast::sigmoid(host[i]));
    }
    CHECK(mismatches == 0);

    // softmax: within the bound of tessel's (JAX's) softmax; rows with inf or NaN as theirs.
    auto y = eval(softmax(x)).to_host();
    auto z = eval(fast_math::softmax(x)).to_host();
    std::size_t off = 0;
    for (std::size_t i = 0; i < host.size(); ++i) {
      if (std::isnan(y[i])) off += !std::isnan(z[i]);
      else off += !(std::abs(z[i] - y[i]) <= 7e-7 * std::abs(y[i]));
    }
    CHECK(off == 0);
  }
  NamedSharding s(test::all_meshes().front(), P());
  auto x = device_put(host, {rows, cols}, s);
  CHECK_THAT(explain(fast_math::gelu(x)), Catch::Matchers::ContainsSubstring("gelu_fast"));
  CHECK_THAT(explain(fast_math::softmax(x)), Catch::Matchers::ContainsSubstring("exp_fast"));
}
