// bfloat16 and float16 (core/half.hpp): conversions, storage, elementwise ops computed in float
// and rounded once when stored, reductions accumulating in float, on every semantics mesh.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "support/close.hpp"
#include "support/reference_tokens.hpp"
#include "tessel/runtime/backend/gemm_batch.hpp"
#include "tessel/runtime/local_dot.hpp"
#include "tessel/tessel.hpp"
#include "vectors.hpp"

using namespace tessel;
using test::require_close;

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

template <class H>
constexpr char const* folder_of = std::same_as<H, bfloat16> ? "math_bf16" : "math_f16";
template <class H>
constexpr char const* dtype_name = std::same_as<H, bfloat16> ? "bfloat16" : "float16";

template <class H>
bool is_nan(H h) {
  return std::same_as<H, bfloat16> ? ((h.bits & 0x7f80) == 0x7f80 && (h.bits & 0x7f)) : ((h.bits & 0x7c00) == 0x7c00 && (h.bits & 0x3ff));
}
// A bfloat16 subnormal: XLA:CPU runs with denormals-are-zero, so these act as zero in its
// arithmetic (tests/data/jax_half/README.md); tessel's kernels keep IEEE gradual underflow.
template <class H>
bool flushed_by_xla(H h) {
  return std::same_as<H, bfloat16> && (h.bits & 0x7f80) == 0 && (h.bits & 0x7f) != 0;
}

// Whether tessel's result `got` is JAX's `want`: the same bits, or both NaN (payloads differ by
// design), or (bfloat16) an underflow XLA flushed to zero: its float32 result was subnormal, so
// tessel's rounds to a bfloat16 subnormal or to the smallest normal (0x0080).
template <class H>
bool same(H got, H want) {
  if (is_nan(got) || is_nan(want)) return is_nan(got) && is_nan(want);
  if (got.bits == want.bits) return true;
  return std::same_as<H, bfloat16> && (want.bits & 0x7fff) == 0 && (got.bits & 0x7fff) <= 0x0080;
}

template <class H>
Tensor<H> unary(std::string const& fn, Tensor<H> const& x) {
  if (fn == "exp") return exp(x);
  if (fn == "log") return log(x);
  if (fn == "tanh") return tanh(x);
  if (fn == "erf") return erf(x);
  if (fn == "logistic") return sigmoid(x);
  if (fn == "gelu") return gelu(x);
  if (fn == "sqrt") return sqrt(x);
  if (fn == "rsqrt") return rsqrt(x);
  if (fn == "sin") return sin(x);
  if (fn == "cos") return cos(x);
  if (fn == "abs") return abs(x);
  if (fn == "neg") return -x;
  FAIL("no function " << fn);
  return x;
}

template <class H>
Tensor<H> binary(std::string const& op, Tensor<H> const& a, Tensor<H> const& b) {
  if (op == "add") return a + b;
  if (op == "sub") return a - b;
  if (op == "mul") return a * b;
  if (op == "div") return a / b;
  if (op == "maximum") return maximum(a, b);
  if (op == "minimum") return minimum(a, b);
  if (op == "pow") return pow(a, b);
  FAIL("no op " << op);
  return a;
}

template <class H>
H hex16(std::string const& t) {
  return H::from_bits(static_cast<std::uint16_t>(std::stoul(t, nullptr, 16)));
}

template <class H>
void check_math() {
  for (std::string fn : {"exp", "log", "tanh", "erf", "logistic", "gelu", "sqrt", "rsqrt", "sin", "cos", "abs", "neg"}) {
    test::ReferenceTokens in(std::string("jax_half/") + folder_of<H>, fn + ".txt");
    REQUIRE(in.word() == "sweep");
    auto start = in.hex(), step = in.hex();
    auto count = in.dec();
    std::vector<H> xs, want;
    for (std::uint64_t i = 0; i < count; ++i) {
      xs.push_back(H::from_bits(static_cast<std::uint16_t>(start + i * step)));
      want.push_back(hex16<H>(in.word()));
    }
    for (auto const& s : test::flat_shardings()) {
      auto x = device_put(xs, Shape{static_cast<std::int64_t>(count)}, s);
      auto got = unary(fn, x).to_host();
      std::size_t wrong = 0, first = 0;
      for (std::size_t i = 0; i < xs.size(); ++i) {
        if (flushed_by_xla(xs[i])) continue;
        if (!same(got[i], want[i]) && wrong++ == 0) first = i;
      }
      INFO(dtype_name<H> << " " << fn << " on " << to_string(s) << ": first difference at input " << std::hex
                         << xs[first].bits << ": tessel " << got[first].bits << ", JAX " << want[first].bits);
      CHECK(wrong == 0);
    }
  }
}

template <class H>
void check_binary() {
  test::ReferenceTokens in("jax_half", std::string("binary_") + (std::same_as<H, bfloat16> ? "bf16" : "f16") + ".txt");
  while (!in.done()) {
    REQUIRE(in.word() == "binary");
    std::string op = in.word();
    auto count = in.dec();
    std::vector<H> as, bs, want;
    for (std::uint64_t i = 0; i < count; ++i) {
      as.push_back(hex16<H>(in.word()));
      bs.push_back(hex16<H>(in.word()));
      want.push_back(hex16<H>(in.word()));
    }
    Shape shape{static_cast<std::int64_t>(count)};
    for (auto const& s : test::flat_shardings()) {
      auto got = binary(op, device_put(as, shape, s), device_put(bs, shape, s)).to_host();
      std::size_t wrong = 0, first = 0;
      for (std::size_t i = 0; i < as.size(); ++i) {
        if (flushed_by_xla(as[i]) || flushed_by_xla(bs[i])) continue;
        if (!same(got[i], want[i]) && wrong++ == 0) first = i;
      }
      INFO(dtype_name<H> << " " << op << " on " << to_string(s) << ": first difference at " << std::hex << as[first].bits
                         << ", " << bs[first].bits << ": tessel " << got[first].bits << ", JAX " << want[first].bits);
      CHECK(wrong == 0);
    }
  }
}

}  // namespace

TEST_CASE("bfloat16 and float16 math functions give JAX's bits on all 65536 inputs, on every mesh", "[half][jax]") {
  check_math<bfloat16>();
  check_math<float16>();
}

TEST_CASE("bfloat16 and float16 binary ops give JAX's bits, on every mesh", "[half][jax]") {
  check_binary<bfloat16>();
  check_binary<float16>();
}

TEST_CASE("float32 to bfloat16 and float16 conversions give JAX's bits", "[half][jax]") {
  test::ReferenceTokens in("jax_half", "casts.txt");
  int sweeps = 0;
  while (!in.done()) {
    if (in.word() != "castsweep") continue;
    std::string from = in.word(), to = in.word();
    auto start = in.hex(), step = in.hex();
    auto count = in.dec();
    if (from != "float32") continue;
    std::vector<float> xs;
    std::vector<std::uint16_t> want;
    for (std::uint64_t i = 0; i < count; ++i) {
      xs.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(start + i * step)));
      want.push_back(static_cast<std::uint16_t>(in.hex()));
    }
    Shape shape{static_cast<std::int64_t>(count)};
    for (auto const& s : test::flat_shardings()) {
      auto x = device_put(xs, shape, s);
      std::vector<std::uint16_t> got;
      if (to == "bfloat16") got = bits(Tensor<bfloat16>(astype<bfloat16>(x)).to_host());
      else got = bits(Tensor<float16>(astype<float16>(x)).to_host());
      std::size_t wrong = 0, first = 0;
      for (std::size_t i = 0; i < xs.size(); ++i) {
        if (std::isnan(xs[i])) {  // NaN payloads: only NaN-ness is promised
          bool nan = to == "bfloat16" ? ((got[i] & 0x7f80) == 0x7f80 && (got[i] & 0x7f)) : ((got[i] & 0x7c00) == 0x7c00 && (got[i] & 0x3ff));
          if (!nan && wrong++ == 0) first = i;
          continue;
        }
        if (got[i] != want[i] && wrong++ == 0) first = i;
      }
      INFO("float32 -> " << to << " on " << to_string(s) << ": first difference at " << std::hex
                         << std::bit_cast<std::uint32_t>(xs[first]) << ": tessel " << got[first] << ", JAX " << want[first]);
      CHECK(wrong == 0);
    }
    ++sweeps;
  }
  CHECK(sweeps >= 2);
}

TEST_CASE("bfloat16 and float16 round to nearest even and keep special values", "[half]") {
  CHECK(bfloat16(1.0f).bits == 0x3f80);
  CHECK(bfloat16(std::bit_cast<float>(0x3f808000u)).bits == 0x3f80);  // a tie: to even
  CHECK(bfloat16(std::bit_cast<float>(0x3f818000u)).bits == 0x3f82);  // a tie: to even (up)
  CHECK(bfloat16(std::bit_cast<float>(0x3f808001u)).bits == 0x3f81);
  CHECK(bfloat16(std::numeric_limits<float>::infinity()).bits == 0x7f80);
  CHECK(bfloat16(-0.0f).bits == 0x8000);
  CHECK(bfloat16(std::bit_cast<float>(0x7f7fffffu)).bits == 0x7f80);  // float32 max rounds to inf
  CHECK(bfloat16(std::bit_cast<float>(0xff800001u)).bits == 0xffc0);  // a NaN: XLA's 7fc0, sign kept
  CHECK(bfloat16(std::bit_cast<float>(0x7fa12345u)).bits == 0x7fc0);  // the payload dropped
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
    REQUIRE(bfloat16(static_cast<float>(g)).bits == (bnan ? ((b & 0x8000) | 0x7fc0) : b));
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
  // Every op computed in float from rounded operands and rounded (XLA:CPU's rule).
  std::vector<std::uint16_t> want;
  auto r = [](float v) { return static_cast<float>(bfloat16(v)); };
  for (std::size_t i = 0; i < xs.size(); ++i) {
    float a = static_cast<float>(hx[i]), b = static_cast<float>(hy[i]);
    want.push_back(bfloat16(r(a * b) + r(a * 2.0f)).bits);
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

TEST_CASE("bfloat16 and float16 dots: float sums rounded once; preferred_element_type; mixed operands",
          "[half][dot]") {
#if defined(TESSEL_TEST_EXPECTS_16BIT_GEMM)
  // This build found oneDNN (CMakeLists.txt): it runs the 16-bit GEMMs of a CPU with a unit for
  // them, and the benchmarks' header says which.
  std::string const info = detail::blas_info().half_gemms;
  CHECK_THAT(info, Catch::Matchers::ContainsSubstring("oneDNN"));
  CHECK((info.find("bfloat16: oneDNN") != std::string::npos) == detail::runs_16bit_gemms(DType::bfloat16));
  CHECK((info.find("; float16: oneDNN") != std::string::npos) == detail::runs_16bit_gemms(DType::float16));
#endif
  INFO("16-bit GEMMs: " << detail::blas_info().half_gemms);
  Shape as{24, 40}, bs{40, 16};
  auto a32 = random::normal(PRNGKey(1), as), b32 = random::normal(PRNGKey(2), bs);
  Tensor<bfloat16> a = astype<bfloat16>(a32), b = astype<bfloat16>(b32);
  Tensor<float16> ah = astype<float16>(a32), bh = astype<float16>(b32);
  // The reference: the float32 GEMM of the widened operands (JAX's jnp.dot of half operands). The
  // products of 16-bit values are exact in float, so a 16-bit GEMM (detail::runs_16bit_gemms)
  // differs from it only by the order of its float sums.
  Tensor<float> wide = matmul(astype<float>(a), astype<float>(b));
  auto wide_host = wide.to_host();
  Tensor<float> preferred = matmul(a, b, preferred_element_type<float>);
  auto const preferred_host = preferred.to_host();
  require_close(preferred_host, wide_host);
  // A bfloat16 result is that float result rounded once.
  std::vector<std::uint16_t> want;
  for (float v : preferred_host) want.push_back(bfloat16(v).bits);
  Tensor<bfloat16> one = matmul(a, b);
  CHECK(bits(one.to_host()) == want);
  // The plan names the GEMM local_dot runs: 16-bit operands of one dtype sum in float32 on every
  // backend (a 16-bit unit, or sgemm of the widened operands); mixed operands go to sgemm.
  CHECK_THAT(explain(matmul(a, b)), Catch::Matchers::ContainsSubstring("bfloat16 GEMM (float32 sums) per device"));
  CHECK_THAT(explain(matmul(ah, bh)), Catch::Matchers::ContainsSubstring("float16 GEMM (float32 sums) per device"));
  CHECK_THAT(explain(matmul(a, b32)), Catch::Matchers::ContainsSubstring("BLAS sgemm per device"));
  Tensor<float> preferred_f16 = matmul(ah, bh, preferred_element_type<float>);
  require_close(preferred_f16.to_host(), Tensor<float>(matmul(astype<float>(ah), astype<float>(bh))).to_host());
  std::vector<std::uint16_t> want_f16;
  for (float v : preferred_f16.to_host()) want_f16.push_back(float16(v).bits);
  CHECK(bits(Tensor<float16>(matmul(ah, bh)).to_host()) == want_f16);
  Tensor<float> mixed = matmul(a, b32);  // bfloat16 x float32 is a float32 dot
  static_assert(std::same_as<decltype(mixed)::value_type, float>);
  CHECK(mixed.to_host() == Tensor<float>(matmul(astype<float>(a), b32)).to_host());
  Tensor<float> f16_bf16 = matmul(ah, b);  // float16 x bfloat16 meet at float32
  CHECK(f16_bf16.to_host() == Tensor<float>(matmul(astype<float>(ah), astype<float>(b))).to_host());
  {  // a 1-D mesh: the contraction split over 'a'
    Mesh const line = make_mesh({8}, {"a"});
    auto x = device_put(a, NamedSharding(line, P(None, "a"))), y = device_put(b, NamedSharding(line, P("a", None)));
    require_close(Tensor<float>(matmul(x, y, preferred_element_type<float>)).to_host(), wide_host);
  }
  for (Mesh const& mesh : {make_mesh({2, 4}, {"a", "b"}), make_mesh({2, 2, 2}, {"a", "b", "c"}),
                           make_mesh({4, 2}, {"a", "b"}, {7, 6, 5, 4, 3, 2, 1, 0})}) {
    for (auto const& [sa, sb] : {std::pair{P("a", "b"), P("b", None)}, std::pair{P(None, "a"), P("a", "b")},
                                 std::pair{P("b", None), P(None, "a")}}) {
      INFO(to_string(mesh) << " " << to_string(sa) << " @ " << to_string(sb));
      auto x = device_put(a, NamedSharding(mesh, sa)), y = device_put(b, NamedSharding(mesh, sb));
      auto got = Tensor<bfloat16>(matmul(x, y)).to_host();
      // A split contraction keeps each device's partial sums in float32 through the all-reduce and
      // rounds once: the float32 result of the same sharded dot, rounded to bfloat16, bit for bit.
      Tensor<float> p = matmul(x, y, preferred_element_type<float>);
      auto const p_host = p.to_host();
      for (std::size_t i = 0; i < got.size(); ++i) {
        INFO("element " << i << ": " << static_cast<float>(got[i]) << " vs " << p_host[i]);
        REQUIRE(got[i].bits == bfloat16(p_host[i]).bits);
      }
      require_close(p_host, wide_host);
    }
  }
  {  // a reduce-scatter onto an uneven result: an empty shard (3 columns over 4) before buffers of their own
    Mesh const mesh = make_mesh({2, 4}, {"a", "b"});
    Tensor<bfloat16> b3 = astype<bfloat16>(random::normal(PRNGKey(3), Shape{40, 3}));
    auto x = device_put(a, NamedSharding(mesh, P(None, "a"))), y = device_put(b3, NamedSharding(mesh, P("a", None)));
    NamedSharding const uneven(mesh, P("a", "b"));
    CHECK(plan_of(with_sharding_constraint(matmul(x, y), uneven)).count(plan::Collective::reduce_scatter) == 1);
    auto got = Tensor<bfloat16>(with_sharding_constraint(matmul(x, y), uneven)).to_host();
    auto const p_host = Tensor<float>(with_sharding_constraint(matmul(x, y, preferred_element_type<float>), uneven)).to_host();
    REQUIRE(got.size() == p_host.size());
    for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(got[i].bits == bfloat16(p_host[i]).bits);
  }
}

TEST_CASE("bfloat16 and float16 attention dots: batch dimensions between the others, transposed and permuted operands",
          "[half][dot]") {
  // q . k^T reads both operands in place (strided per (batch, head)); p . v reads v in place; the
  // output projection of (b, h, s, d) by (h, d, e) first permutes its lhs into GEMM order. Each as
  // the same dot of the widened operands, on one device and sharded over heads and batch.
  Shape const qs{2, 8, 4, 16}, ws{4, 16, 24};
  DotDims const qk{{3}, {3}, {0, 2}, {0, 2}}, pv{{3}, {1}, {0, 1}, {0, 2}}, out{{1, 3}, {0, 1}, {}, {}};
  auto check = [&](auto tag) {
    using H = decltype(tag);
    INFO(dtype_name<H>);
    Tensor<H> q = astype<H>(random::normal(PRNGKey(3), qs)), k = astype<H>(random::normal(PRNGKey(4), qs)),
              v = astype<H>(random::normal(PRNGKey(5), qs)), w = astype<H>(random::normal(PRNGKey(6), ws));
    auto wide = [](Tensor<H> const& t) { return Tensor<float>(astype<float>(t)); };
    auto const scores = Tensor<float>(dot_general(wide(q), wide(k), qk)).to_host();
    Tensor<H> p = astype<H>(dot_general(q, k, qk, preferred_element_type<float>) * 0.25f);
    auto const heads = Tensor<float>(dot_general(wide(p), wide(v), pv)).to_host();
    Tensor<H> o = astype<H>(dot_general(p, v, pv, preferred_element_type<float>));
    auto const projected = Tensor<float>(dot_general(wide(o), wide(w), out)).to_host();
    require_close(Tensor<float>(dot_general(q, k, qk, preferred_element_type<float>)).to_host(), scores);
    require_close(Tensor<float>(dot_general(p, v, pv, preferred_element_type<float>)).to_host(), heads);
    require_close(Tensor<float>(dot_general(o, w, out, preferred_element_type<float>)).to_host(), projected);
    for (Mesh const& mesh : {make_mesh({2, 4}, {"dp", "mp"}), make_mesh({2, 2, 2}, {"dp", "mp", "x"}, {3, 1, 2, 0, 7, 5, 6, 4})}) {
      INFO(to_string(mesh));
      NamedSharding const by_head(mesh, P("dp", None, "mp", None));
      auto qd = device_put(q, by_head), kd = device_put(k, by_head), vd = device_put(v, by_head);
      require_close(Tensor<float>(dot_general(qd, kd, qk, preferred_element_type<float>)).to_host(), scores);
      auto pd = device_put(p, NamedSharding(mesh, P("dp", "mp", None, None)));
      require_close(Tensor<float>(dot_general(pd, vd, pv, preferred_element_type<float>)).to_host(), heads);
      auto od = device_put(o, NamedSharding(mesh, P("dp", "mp", None, None)));
      auto wd = device_put(w, NamedSharding(mesh, P("mp", None, None)));
      require_close(Tensor<float>(dot_general(od, wd, out, preferred_element_type<float>)).to_host(), projected);
    }
  };
  check(bfloat16{});
  check(float16{});
}

namespace {

// The `tensor CASE NAME DTYPE SHAPE COUNT` blocks of a jax_half file: bit patterns by "CASE NAME".
struct HalfTensors {
  std::map<std::string, std::vector<std::uint32_t>> bits;
  std::map<std::string, std::string> dtype;
  explicit HalfTensors(std::string const& file) {
    test::ReferenceTokens in("jax_half", file);
    while (!in.done()) {
      if (in.word() != "tensor") continue;
      std::string key = in.word();
      key += " " + in.word();
      dtype[key] = in.word();
      (void)in.word();  // shape
      auto count = in.dec();
      auto& v = bits[key];
      for (std::uint64_t i = 0; i < count; ++i) v.push_back(static_cast<std::uint32_t>(in.hex()));
    }
  }
  template <class H>
  std::vector<H> halves(std::string const& key) const {
    std::vector<H> out;
    for (auto b : bits.at(key)) out.push_back(H::from_bits(static_cast<std::uint16_t>(b)));
    return out;
  }
};

template <class H>
void check_chains(HalfTensors const& v) {
  std::string const c = std::string("fusion_") + dtype_name<H>;
  auto hx = v.halves<H>(c + " x"), hy = v.halves<H>(c + " y"), hz = v.halves<H>(c + " z");
  Shape shape{static_cast<std::int64_t>(hx.size())};
  for (auto const& s : test::flat_shardings()) {
    auto x = device_put(hx, shape, s), y = device_put(hy, shape, s), z = device_put(hz, shape, s);
    std::vector<std::pair<std::string, Tensor<H>>> chains{
        {"c1", tanh(x * y + 1) * 0.5 - x / 3},
        {"c2", exp(x) * x + y},
        {"c3", x * y + z},
        {"c4", gelu(x) * y},
        {"c5", (x + y) + z},
        {"c6", x * 0.1 + 0.3},
        {"c7", sigmoid(x) * y},
        {"c8", x * y + z * x},
        {"c11", exp(x) / y},
        {"c12", log(x * x + 1) - sqrt(abs(y))},
    };
    for (auto const& [name, t] : chains) {
      auto got = t.to_host();
      auto want = v.halves<H>(c + " out_" + name);
      std::size_t wrong = 0, first = 0;
      for (std::size_t i = 0; i < got.size(); ++i) {
        if (flushed_by_xla(hx[i]) || flushed_by_xla(hy[i]) || flushed_by_xla(hz[i])) continue;
        if (!same(got[i], want[i]) && wrong++ == 0) first = i;
      }
      INFO(dtype_name<H> << " chain " << name << " on " << to_string(s) << ": first difference at element " << first
                         << ": tessel " << std::hex << got[first].bits << ", JAX " << want[first].bits);
      CHECK(wrong == 0);
    }
  }
}

}  // namespace

TEST_CASE("fused bfloat16 and float16 chains give JAX's bits (every op rounds), on every mesh", "[half][jax]") {
  HalfTensors v("fusion.txt");
  check_chains<bfloat16>(v);
  check_chains<float16>(v);
  // jnp.dot of half operands: XLA's float32 dot rounded once (tessel's BLAS sums in another order:
  // the rounded results agree but for the rare product within an ulp of a rounding boundary).
  for (std::string c : {"dot_bfloat16", "dot_float16"}) {
    bool const bf = c == "dot_bfloat16";
    auto check = [&](auto tag) {
      using H = decltype(tag);
      auto a = device_put(v.halves<H>(c + " a"), Shape{8, 300}), b = device_put(v.halves<H>(c + " b"), Shape{300, 16});
      auto got = Tensor<H>(matmul(a, b)).to_host();
      auto want = v.halves<H>(c + " out");
      std::size_t off = 0;
      for (std::size_t i = 0; i < got.size(); ++i) off += got[i].bits != want[i].bits;
      INFO(c << ": " << off << " of " << got.size() << " differ");
      CHECK(off <= got.size() / 32);
    };
    if (bf) check(bfloat16{});
    else check(float16{});
  }
}

namespace {

// Ops that pick an operand (where, neg, abs, maximum, minimum, relu) skip their rounding inside a
// fused kernel when every operand is already a value of the dtype (runtime/kernel_op.hpp): the
// fused chains give the bits of the same ops evaluated one by one, each result stored (rounded)
// before the next op reads it, on JAX's fusion inputs (specials: 0, -0, inf, NaN, 2^-14 among them).
template <class H>
void check_picking_chains(HalfTensors const& v) {
  std::string const c = std::string("fusion_") + dtype_name<H>;
  auto hx = v.halves<H>(c + " x"), hy = v.halves<H>(c + " y"), hz = v.halves<H>(c + " z");
  Shape shape{static_cast<std::int64_t>(hx.size())};
  for (auto const& s : test::flat_shardings()) {
    auto x = device_put(hx, shape, s), y = device_put(hy, shape, s), z = device_put(hz, shape, s);
    Tensor<H> xy = x * y, yz = y * z, xz = x * z;
    Tensor<H> neg_yz = -yz, abs_xz = abs(xz), max_xy_z = maximum(xy, z), min_xy_z = minimum(xy, z), relu_xy = relu(xy);
    Tensor<H> picked = where(x > y, xy, neg_yz);
    auto tenth = device_put(std::vector<H>(hx.size(), H(0.1f)), shape, s);
    std::vector<std::pair<std::string, std::pair<Tensor<H>, Tensor<H>>>> chains{
        {"where(x>y, x*y, -(y*z))", {where(x > y, x * y, -(y * z)), picked}},
        {"maximum(x*y, z) - abs(x*z)", {maximum(x * y, z) - abs(x * z), Tensor<H>(max_xy_z - abs_xz)}},
        {"minimum(x*y, z) * relu(x*y)", {minimum(x * y, z) * relu(x * y), Tensor<H>(min_xy_z * relu_xy)}},
        {"where(x>y, x*y, z) + 1 (a picked product feeds a rounded add)", {where(x > y, x * y, z) + 1, Tensor<H>(Tensor<H>(where(x > y, xy, z)) + 1)}},
        {"where(x>0, x, 0.1) (the scalar is rounded to the dtype first)", {where(x > 0, x, 0.1), Tensor<H>(where(x > 0, x, tenth))}},
    };
    for (auto const& [name, pair] : chains) {
      auto got = pair.first.to_host(), want = pair.second.to_host();
      std::size_t wrong = 0, first = 0;
      for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i].bits != want[i].bits && !(is_nan(got[i]) && is_nan(want[i])) && wrong++ == 0) first = i;
      INFO(dtype_name<H> << " " << name << " on " << to_string(s) << ": first difference at element " << first
                         << ": fused " << std::hex << got[first].bits << ", op by op " << want[first].bits);
      CHECK(wrong == 0);
    }
  }
}

}  // namespace

TEST_CASE("ops that pick an operand need no rounding in a fused 16-bit kernel: the op-by-op bits", "[half]") {
  using Leaf = TensorNode<bfloat16>;
  using Cond = decltype(std::declval<Leaf>() > std::declval<Leaf>());
  static_assert(std::same_as<detail::node_op_t<ops::select, bfloat16, Cond, Leaf, Leaf>, ops::select>);
  static_assert(std::same_as<detail::node_op_t<ops::maximum, float16, Leaf, TensorNode<float16>>,
                             detail::RoundedTo<ops::maximum, float16>>);  // a bfloat16 operand in a float16 max
  static_assert(std::same_as<detail::node_op_t<ops::mul, bfloat16, Leaf, Leaf>, detail::RoundedTo<ops::mul, bfloat16>>);
  static_assert(std::same_as<detail::node_op_t<ops::neg, float, TensorNode<float>>, ops::neg>);
  HalfTensors v("fusion.txt");
  check_picking_chains<bfloat16>(v);
  check_picking_chains<float16>(v);
}

TEST_CASE("jax.random.uniform and normal in bfloat16 and float16 give JAX's bits, however sharded", "[half][jax][random]") {
  test::ReferenceTokens in("jax_half", "random.txt");
  int arrays = 0;
  while (!in.done()) {
    REQUIRE(in.word() == "array");
    std::string fn = in.word(), dtype = in.word();
    random::Key key{static_cast<std::uint32_t>(in.hex()), static_cast<std::uint32_t>(in.hex())};
    std::string dims = in.word();
    auto lo = static_cast<std::uint16_t>(in.hex()), hi = static_cast<std::uint16_t>(in.hex());
    auto count = in.dec();
    std::vector<std::uint16_t> want;
    for (std::uint64_t i = 0; i < count; ++i) want.push_back(static_cast<std::uint16_t>(in.hex()));
    Shape shape;
    for (std::size_t at = 0; at < dims.size();) {
      std::size_t x = dims.find('x', at);
      shape.push_back(std::stoll(dims.substr(at, x - at)));
      at = x == std::string::npos ? dims.size() : x + 1;
    }
    auto check = [&](auto tag) {
      using H = decltype(tag);
      float const minval = static_cast<float>(H::from_bits(lo)), maxval = static_cast<float>(H::from_bits(hi));
      std::vector<NamedSharding> shardings{detail::single_device_sharding()};
      if (shape.rank() == 1) shardings = test::flat_shardings();
      for (auto const& s : shardings) {
        INFO(fn << " " << dtype << " " << dims << " on " << to_string(s));
        auto t = fn == "uniform" ? random::uniform<H>(key, shape, s, minval, maxval) : random::normal<H>(key, shape, s);
        CHECK(bits(t.to_host()) == want);
      }
    };
    if (dtype == "bfloat16") check(bfloat16{});
    else check(float16{});
    ++arrays;
  }
  CHECK(arrays >= 8);
}

namespace {

template <class H>
void check_reductions(HalfTensors const& v, std::string const& c, Shape const& shape) {
  auto hx = v.halves<H>(c + " x");
  std::int64_t const cols = shape[shape.rank() - 1];
  auto hg = v.halves<H>(c + " g"), hb = v.halves<H>(c + " b");
  std::vector<NamedSharding> shardings{detail::single_device_sharding()};
  if (shape.rank() == 2)
    for (Mesh const& m : {make_mesh({8}, {"x"}), make_mesh({2, 4}, {"a", "b"}), make_mesh({3, 2}, {"a", "b"}, {5, 0, 3, 1, 7, 2})})
      shardings.emplace_back(m, P(m.axes().name(0).view()));  // rows split: each row's reduction on one device
  for (auto const& s : shardings) {
    auto x = device_put(hx, shape, s);
    NamedSharding const rep(s.mesh(), P());
    auto g = device_put(hg, Shape{cols}, rep), b = device_put(hb, Shape{cols}, rep);
    std::vector<std::pair<std::string, Tensor<H>>> ops{
        {"sum", sum(x, -1)},
        {"mean", mean(x, -1)},
        {"var", var(x, -1)},
        {"max", max(x, -1)},
        {"softmax", softmax(x, -1)},
        {"div_row_sum", x / sum(x, -1, true)},
        {"layer_norm", (x - mean(x, -1, true)) * rsqrt(var(x, -1, true) + 1e-5) * g + b},
    };
    for (auto const& [name, t] : ops) {
      auto got = t.to_host();
      auto want = v.halves<H>(c + " out_" + name);
      std::size_t wrong = 0, first = 0;
      for (std::size_t i = 0; i < got.size(); ++i)
        if (!same(got[i], want[i]) && wrong++ == 0) first = i;
      INFO(c << " " << name << " on " << to_string(s) << ": " << wrong << " of " << got.size()
             << " differ; first at " << first << ": tessel " << std::hex << got[first].bits << ", JAX "
             << want[first].bits);
      CHECK(wrong == 0);
    }
  }
}

}  // namespace

TEST_CASE("bfloat16 and float16 reductions, softmax and a layer norm give JAX's bits", "[half][jax][reduce]") {
  HalfTensors v("reduce.txt");
  for (auto const& [suffix, shape] : {std::pair{"8x37", Shape{8, 37}}, std::pair{"3x1000", Shape{3, 1000}},
                                      std::pair{"4096", Shape{4096}}}) {
    check_reductions<bfloat16>(v, std::string("reduce_bfloat16_") + suffix, shape);
    check_reductions<float16>(v, std::string("reduce_float16_") + suffix, shape);
  }
}

TEST_CASE("round_through<bfloat16>, the kernels' 32-bit rounding, is float(bfloat16(v))", "[half]") {
  // Every sign, exponent and high mantissa (all 65536 upper halves, NaNs and infinities among
  // them) with the lower halves that decide a rounding: zero, the smallest, just below, at and
  // just above the tie, the largest.
  std::size_t wrong = 0;
  for (std::uint32_t hi = 0; hi <= 0xffffu; ++hi)
    for (std::uint32_t lo : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) {
      float const v = std::bit_cast<float>(hi << 16 | lo);
      float const want = static_cast<float>(bfloat16(v)), got = round_through<bfloat16>(v);
      if (std::bit_cast<std::uint32_t>(got) != std::bit_cast<std::uint32_t>(want) && wrong++ == 0)
        FAIL_CHECK("first difference at " << std::hex << (hi << 16 | lo) << ": " << std::bit_cast<std::uint32_t>(got)
                                           << " vs " << std::bit_cast<std::uint32_t>(want));
    }
  CHECK(wrong == 0);
  CHECK(round_through<float16>(1.0f / 3) == static_cast<float>(float16(1.0f / 3)));
}
