// tessel: counter-based random numbers that match jax.random bit for bit.
//
// This is the pure math kernel layer: the threefry2x32 hash, JAX's key derivation (PRNGKey, split,
// fold_in) and the per-element random bits JAX assigns to an array (exact everywhere: integer
// arithmetic); the bits -> float transforms of jax.random.uniform and jax.random.normal are
// runtime/random_from_bits.hpp.  Everything is header-only, allocation-free and marked
// KOKKOS_INLINE_FUNCTION, so it runs inside Kokkos kernels on host and device.
//
// Reference: JAX's DEFAULT settings, jax_threefry_partitionable=True (the default since JAX 0.5) and
// the threefry2x32 implementation; checked against jax / jaxlib 0.10.2 on CPU by
// tests/runtime/test_threefry.cpp with vectors from tests/data/jax_random/make_vectors.py.
//
// The partitionable scheme makes every array element independent: the element at row-major flat
// index i of an array drawn from key k uses the counter pair (hi32(i), lo32(i)):
//     (y0, y1) = threefry2x32(k, hi32(i), lo32(i))
//     32-bit draws (float32, uint32): y0 ^ y1          -> bits32(k, i)
//     64-bit draws (float64, uint64): y0 << 32 | y1    -> bits64(k, i)   (needs jax_enable_x64)
// so a kernel can compute any element in isolation, in any order, on any device.
//
#include <Kokkos_BitManipulation.hpp>
#include <Kokkos_Macros.hpp>

#include "tessel/core/half.hpp"
#include "tessel/core/no_contract.hpp"
#include "tessel/expr/math.hpp"
#include <Kokkos_MathematicalFunctions.hpp>
#include <Kokkos_NumericTraits.hpp>

#include <cstdint>
#include <type_traits>

namespace tessel::prng {

// JAX's raw threefry key data: jax.random.key_data(key) == uint32[2]{k0, k1}.
struct Key {
  std::uint32_t k0, k1;
};

KOKKOS_INLINE_FUNCTION constexpr bool operator==(Key a, Key b) noexcept {
  return a.k0 == b.k0 && a.k1 == b.k1;
}

// The two output words of one threefry2x32 block.
struct U32x2 {
  std::uint32_t x0, x1;
};

KOKKOS_INLINE_FUNCTION constexpr bool operator==(U32x2 a, U32x2 b) noexcept {
  return a.x0 == b.x0 && a.x1 == b.x1;
}

namespace detail {

KOKKOS_INLINE_FUNCTION constexpr std::uint32_t rotl32(std::uint32_t x, int r) noexcept {
  return (x << r) | (x >> (32 - r));
}

template <int R0, int R1, int R2, int R3>
KOKKOS_INLINE_FUNCTION constexpr void four_rounds(std::uint32_t& x0, std::uint32_t& x1) noexcept {
  x0 += x1; x1 = rotl32(x1, R0); x1 ^= x0;
  x0 += x1; x1 = rotl32(x1, R1); x1 ^= x0;
  x0 += x1; x1 = rotl32(x1, R2); x1 ^= x0;
  x0 += x1; x1 = rotl32(x1, R3); x1 ^= x0;
}

template <class To, class From>
KOKKOS_INLINE_FUNCTION To bit_cast(const From& from) noexcept {
  return Kokkos::bit_cast<To>(from);
}

KOKKOS_INLINE_FUNCTION constexpr float inf_f32() noexcept {
  return Kokkos::Experimental::infinity_v<float>;
}
KOKKOS_INLINE_FUNCTION constexpr double inf_f64() noexcept {
  return Kokkos::Experimental::infinity_v<double>;
}

KOKKOS_INLINE_FUNCTION float fma(float a, float b, float c) noexcept { return Kokkos::fma(a, b, c); }
KOKKOS_INLINE_FUNCTION double fma(double a, double b, double c) noexcept {
  return Kokkos::fma(a, b, c);
}

}  // namespace detail

// ------------------------------------------------------------------------------------------------
// threefry2x32: 20 rounds, rotations {13,15,26,6} / {17,29,16,24}, key schedule k0, k1,
// k0 ^ k1 ^ 0x1BD11BDA, injection every 4 rounds (JAX's _threefry2x32_lowering).
KOKKOS_INLINE_FUNCTION constexpr U32x2 threefry2x32(Key key, std::uint32_t x0,
                                                    std::uint32_t x1) noexcept {
  const std::uint32_t ks0 = key.k0;
  const std::uint32_t ks1 = key.k1;
  const std::uint32_t ks2 = key.k0 ^ key.k1 ^ 0x1BD11BDAu;
  x0 += ks0;
  x1 += ks1;
  detail::four_rounds<13, 15, 26, 6>(x0, x1);
  x0 += ks1;
  x1 += ks2 + 1u;
  detail::four_rounds<17, 29, 16, 24>(x0, x1);
  x0 += ks2;
  x1 += ks0 + 2u;
  detail::four_rounds<13, 15, 26, 6>(x0, x1);
  x0 += ks0;
  x1 += ks1 + 3u;
  detail::four_rounds<17, 29, 16, 24>(x0, x1);
  x0 += ks1;
  x1 += ks2 + 4u;
  detail::four_rounds<13, 15, 26, 6>(x0, x1);
  x0 += ks2;
  x1 += ks0 + 5u;
  return {x0, x1};
}

// threefry2x32 applied to the 64-bit counter i, split as (hi32(i), lo32(i)) like JAX's
// iota_2x32_shape.
KOKKOS_INLINE_FUNCTION constexpr U32x2 threefry2x32(Key key, std::uint64_t counter) noexcept {
  return threefry2x32(key, static_cast<std::uint32_t>(counter >> 32),
                      static_cast<std::uint32_t>(counter));
}

// ------------------------------------------------------------------------------------------------
// Keys.

// jax.random.PRNGKey(seed) (and jax.random.key_data(jax.random.key(seed))) for an integer seed,
// with JAX's default jax_enable_x64=False: JAX converts the Python int to int64 and then to the
// 32-bit default integer, keeping the low 32 bits (two's complement), and the key is
// {0, low32(seed)}.  So PRNGKey(-1) == {0, 0xFFFFFFFF}, PRNGKey(2**32 + 5) == {0, 5}, and
// PRNGKey(-5) == PRNGKey(2**32 - 5).  Seeds outside int64 raise OverflowError in JAX.
KOKKOS_INLINE_FUNCTION constexpr Key PRNGKey(std::int64_t seed) noexcept {
  return {0u, static_cast<std::uint32_t>(static_cast<std::uint64_t>(seed))};
}

// jax.random.PRNGKey(seed) with jax_enable_x64=True: the 64-bit two's complement seed split as
// {hi32, lo32}.  Equal to PRNGKey(seed) for 0 <= seed < 2**32; PRNGKey_x64(-1) == {0xFFFFFFFF,
// 0xFFFFFFFF}, PRNGKey_x64(2**32 + 5) == {1, 5}.
KOKKOS_INLINE_FUNCTION constexpr Key PRNGKey_x64(std::int64_t seed) noexcept {
  const auto u = static_cast<std::uint64_t>(seed);
  return {static_cast<std::uint32_t>(u >> 32), static_cast<std::uint32_t>(u)};
}

// jax.random.split(key, n)[i] (partitionable, fold-like split: new key i = threefry2x32(key, i)).
// The result does not depend on n; for split(key, shape) pass the row-major flat index i.
// Precondition i < n (not checked; n is only documentation).
KOKKOS_INLINE_FUNCTION constexpr Key split(Key key, [[maybe_unused]] std::uint64_t n,
                                           std::uint64_t i) noexcept {
  const U32x2 y = threefry2x32(key, i);
  return {y.x0, y.x1};
}

// jax.random.fold_in(key, data) == threefry2x32(key, {0, data}).  JAX takes data as uint32 (a
// Python int is converted with jnp.uint32).  Note fold_in(key, d) == split(key, n, d).
KOKKOS_INLINE_FUNCTION constexpr Key fold_in(Key key, std::uint32_t data) noexcept {
  const U32x2 y = threefry2x32(key, 0u, data);
  return {y.x0, y.x1};
}

// ------------------------------------------------------------------------------------------------
// Random bits of the element at row-major flat index i of an array drawn from key.

// jax.random.bits(key, shape, uint32).ravel()[i]; the source of every 32-bit draw (float32 ...).
KOKKOS_INLINE_FUNCTION constexpr std::uint32_t bits32(Key key, std::uint64_t flat_index) noexcept {
  const U32x2 y = threefry2x32(key, flat_index);
  return y.x0 ^ y.x1;
}

// jax.random.bits(key, shape, uint64).ravel()[i] (jax_enable_x64=True); the source of every 64-bit
// draw (float64 ...).
KOKKOS_INLINE_FUNCTION constexpr std::uint64_t bits64(Key key, std::uint64_t flat_index) noexcept {
  const U32x2 y = threefry2x32(key, flat_index);
  return (static_cast<std::uint64_t>(y.x0) << 32) | y.x1;
}

}  // namespace tessel::prng
