// Checks tessel::prng (include/tessel/runtime/threefry.hpp, random_from_bits.hpp) bit for bit against jax.random
// reference vectors (tests/data/jax_random/*.txt, written by tests/data/jax_random/make_vectors.py
// with CPU jax 0.10.2, default jax_threefry_partitionable=True).
//
// Standalone build, from the repository root:
//   ./tessel run g++ -std=c++20 -O2 -I include -I /usr/include/kokkos tests/runtime/test_threefry.cpp
//       -DTESSEL_TEST_DATA_DIR=\"$PWD/tests/data\" -lCatch2Main -lCatch2 -lkokkoscore -o /tmp/t
#include <tessel/runtime/random_from_bits.hpp>

#include <catch2/catch_test_macros.hpp>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/reference_tokens.hpp"

namespace {

namespace prng = tessel::prng;

// Reference tokens of tests/data/jax_random, with key pairs.
class Tokens : public tessel::test::ReferenceTokens {
 public:
  explicit Tokens(const std::string& name) : ReferenceTokens("jax_random", name) {}
  prng::Key key() {
    const auto k0 = static_cast<std::uint32_t>(hex());
    const auto k1 = static_cast<std::uint32_t>(hex());
    return {k0, k1};
  }
};
  }

 private:
  std::vector<std::string> toks_;
  std::size_t pos_ = 0;
};

// One reference value: the random bits that produce it (bits32/bits64 of key at index, or given
// directly), the bounds for uniform, and JAX's value bits.
struct Sample {
  prng::Key key;
  std::uint64_t index;
  bool from_bits;  // true: rbits given directly ("frombits" record)
  std::uint64_t rbits;
  std::uint64_t lo, hi;  // uniform bounds' bit patterns (0 0 for bits / normal)
  std::uint64_t value;
};

// Reads the array / sparse / frombits records of a bits, uniform or normal file.
std::vector<Sample> read_samples(const std::string& name) {
  Tokens t(name);
  std::vector<Sample> out;
  while (!t.done()) {
    const std::string tag = t.word();
    if (tag == "array") {
      const prng::Key key = t.key();
      t.word();  // shape, informational: the flat index is all that matters
      const std::uint64_t lo = t.hex(), hi = t.hex(), n = t.dec();
      for (std::uint64_t i = 0; i < n; ++i) out.push_back({key, i, false, 0, lo, hi, t.hex()});
    } else if (tag == "sparse") {
      const prng::Key key = t.key();
      t.word();
      const std::uint64_t n = t.dec();
      for (std::uint64_t j = 0; j < n; ++j) {
        const std::uint64_t i = t.dec();
        out.push_back({key, i, false, 0, 0, 0, t.hex()});
      }
    } else if (tag == "frombits") {
      const std::uint64_t n = t.dec();
      for (std::uint64_t j = 0; j < n; ++j) {
        const std::uint64_t rb = t.hex();
        out.push_back({{0, 0}, 0, true, rb, 0, 0, t.hex()});
      }
    } else {
      FAIL("unknown record '" << tag << "' in " << name);
    }
  }
  REQUIRE(!out.empty());
  return out;
}

template <class T, class U>
T bits_as(U u) {
  return prng::detail::bit_cast<T>(u);
}

// Distance in units in the last place between two floats of the same type (as bit patterns).
std::int64_t ulp_distance32(std::uint32_t a, std::uint32_t b) {
  auto ord = [](std::uint32_t x) -> std::int64_t {
    return (x & 0x80000000u) ? -static_cast<std::int64_t>(x & 0x7FFFFFFFu) : std::int64_t(x);
  };
  const std::int64_t d = ord(a) - ord(b);
  return d < 0 ? -d : d;
}

std::uint64_t ulp_distance64(std::uint64_t a, std::uint64_t b) {
  auto ord = [](std::uint64_t x) -> __int128 {
    const std::uint64_t sign = std::uint64_t{1} << 63;
    return (x & sign) ? -static_cast<__int128>(x & ~sign) : static_cast<__int128>(x);
  };
  const __int128 d = ord(a) - ord(b);
  return static_cast<std::uint64_t>(d < 0 ? -d : d);
}

struct Stats {
  std::size_t n = 0, equal = 0;
  std::uint64_t max_ulp = 0;
};

// Known-answer tests of threefry2x32-20 (Random123 / JAX's random_test), evaluated at compile time.
static_assert(prng::threefry2x32({0u, 0u}, 0u, 0u) == prng::U32x2{0x6b200159u, 0x99ba4efeu});
static_assert(prng::threefry2x32({0xffffffffu, 0xffffffffu}, 0xffffffffu, 0xffffffffu) ==
              prng::U32x2{0x1cb996fcu, 0xbb002be7u});
static_assert(prng::threefry2x32({0x13198a2eu, 0x03707344u}, 0x243f6a88u, 0x85a308d3u) ==
              prng::U32x2{0xc4923a9cu, 0x483df7a0u});
static_assert(prng::PRNGKey(-1) == prng::Key{0u, 0xffffffffu});
static_assert(prng::PRNGKey_x64(-1) == prng::Key{0xffffffffu, 0xffffffffu});

}  // namespace

TEST_CASE("threefry2x32 known answers", "[prng]") {
  // The same vectors at run time (the static_asserts above cover compile time).
  CHECK(prng::threefry2x32({0u, 0u}, 0u, 0u) == prng::U32x2{0x6b200159u, 0x99ba4efeu});
  CHECK(prng::threefry2x32({0x13198a2eu, 0x03707344u}, 0x243f6a88u, 0x85a308d3u) ==
        prng::U32x2{0xc4923a9cu, 0x483df7a0u});
}

TEST_CASE("PRNGKey matches jax.random.PRNGKey (x64 off and on)", "[prng]") {
  for (const bool x64 : {false, true}) {
    Tokens t(x64 ? "keys_x64.txt" : "keys.txt");
    int n = 0;
    while (!t.done()) {
      REQUIRE(t.word() == "key");
      const std::int64_t seed = t.sdec();
      const prng::Key want = t.key();
      const prng::Key got = x64 ? prng::PRNGKey_x64(seed) : prng::PRNGKey(seed);
      INFO("x64=" << x64 << " seed=" << seed);
      CHECK(got == want);
      ++n;
    }
    CHECK(n >= 10);
  }
}

TEST_CASE("split matches jax.random.split", "[prng]") {
  Tokens t("split.txt");
  int n_rows = 0;
  while (!t.done()) {
    REQUIRE(t.word() == "split");
    const prng::Key key = t.key();
    const std::uint64_t n = t.dec(), i = t.dec();
    const prng::Key want = t.key();
    INFO("key " << key.k0 << "," << key.k1 << " n=" << n << " i=" << i);
    CHECK(prng::split(key, n, i) == want);
    ++n_rows;
  }
  CHECK(n_rows >= 100);
}

TEST_CASE("fold_in matches jax.random.fold_in", "[prng]") {
  Tokens t("fold_in.txt");
  int n_rows = 0;
  while (!t.done()) {
    REQUIRE(t.word() == "fold_in");
    const prng::Key key = t.key();
    const auto data = static_cast<std::uint32_t>(t.dec());
    const prng::Key want = t.key();
    INFO("key " << key.k0 << "," << key.k1 << " data=" << data);
    CHECK(prng::fold_in(key, data) == want);
    ++n_rows;
  }
  CHECK(n_rows >= 40);
}

TEST_CASE("bits32 / bits64 match jax.random.bits", "[prng]") {
  Stats s32, s64;
  for (const Sample& s : read_samples("bits32.txt")) {
    ++s32.n;
    s32.equal += prng::bits32(s.key, s.index) == s.value;
  }
  for (const Sample& s : read_samples("bits64.txt")) {
    ++s64.n;
    s64.equal += prng::bits64(s.key, s.index) == s.value;
  }
  CHECK(s32.n >= 300);
  CHECK(s32.equal == s32.n);
  CHECK(s64.n >= 300);
  CHECK(s64.equal == s64.n);
}

TEST_CASE("uniform float32 matches jax.random.uniform bitwise", "[prng]") {
  Stats st;
  std::size_t non_unit_range = 0;
  for (const Sample& s : read_samples("uniform_f32.txt")) {
    const float lo = bits_as<float>(static_cast<std::uint32_t>(s.lo));
    const float hi = bits_as<float>(static_cast<std::uint32_t>(s.hi));
    const float got = prng::uniform_f32(s.key, s.index, lo, hi);
    non_unit_range += (lo != 0.0f || hi != 1.0f);
    ++st.n;
    st.equal += bits_as<std::uint32_t>(got) == static_cast<std::uint32_t>(s.value);
  }
  INFO("uniform f32: " << st.equal << "/" << st.n << " bitwise equal");
  CHECK(st.n >= 2000);
  CHECK(non_unit_range >= 1000);
  CHECK(st.equal == st.n);
}

TEST_CASE("uniform float64 matches jax.random.uniform bitwise (x64)", "[prng]") {
  Stats st;
  std::size_t non_unit_range = 0;
  for (const Sample& s : read_samples("uniform_f64.txt")) {
    const double lo = bits_as<double>(s.lo), hi = bits_as<double>(s.hi);
    const double got = prng::uniform_f64(s.key, s.index, lo, hi);
    non_unit_range += (lo != 0.0 || hi != 1.0);
    ++st.n;
    st.equal += bits_as<std::uint64_t>(got) == s.value;
  }
  INFO("uniform f64: " << st.equal << "/" << st.n << " bitwise equal");
  CHECK(st.n >= 2000);
  CHECK(non_unit_range >= 1000);
  CHECK(st.equal == st.n);
}

TEST_CASE("normal float32 matches jax.random.normal bitwise", "[prng]") {
  Stats st;
  std::size_t n_from_bits = 0;
  for (const Sample& s : read_samples("normal_f32.txt")) {
    const std::uint32_t rb =
        s.from_bits ? static_cast<std::uint32_t>(s.rbits) : prng::bits32(s.key, s.index);
    const float got = prng::normal_from_bits(rb);
    if (!s.from_bits) CHECK(bits_as<std::uint32_t>(prng::normal_f32(s.key, s.index)) ==
                            bits_as<std::uint32_t>(got));
    n_from_bits += s.from_bits;
    const auto g = bits_as<std::uint32_t>(got);
    const auto w = static_cast<std::uint32_t>(s.value);
    ++st.n;
    st.equal += g == w;
    const auto d = static_cast<std::uint64_t>(ulp_distance32(g, w));
    if (d > st.max_ulp) st.max_ulp = d;
  }
  INFO("normal f32: " << st.equal << "/" << st.n << " bitwise equal, max ulp " << st.max_ulp);
  CHECK(st.n >= 5000);
  CHECK(n_from_bits >= 500);
  CHECK(st.max_ulp == 0);
  CHECK(st.equal == st.n);
}

TEST_CASE("normal float64 matches jax.random.normal bitwise (x64)", "[prng]") {
  Stats st;
  std::size_t n_from_bits = 0;
  for (const Sample& s : read_samples("normal_f64.txt")) {
    const std::uint64_t rb = s.from_bits ? s.rbits : prng::bits64(s.key, s.index);
    const double got = prng::normal_from_bits(rb);
    n_from_bits += s.from_bits;
    const auto g = bits_as<std::uint64_t>(got);
    ++st.n;
    st.equal += g == s.value;
    const std::uint64_t d = ulp_distance64(g, s.value);
    if (d > st.max_ulp) st.max_ulp = d;
  }
  INFO("normal f64: " << st.equal << "/" << st.n << " bitwise equal, max ulp " << st.max_ulp);
  CHECK(st.n >= 2000);
  CHECK(n_from_bits >= 300);
  CHECK(st.max_ulp == 0);
  CHECK(st.equal == st.n);
}
