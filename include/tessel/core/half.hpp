#pragma once
// 16-bit floating storage types: bfloat16 (8 exponent bits, 7 mantissa bits: float32's range) and
// float16 (IEEE binary16). They are storage, not arithmetic: kernels load them as float, compute
// in float and round each op's result, as XLA does (docs/semantics.md, "Half precision").
// Conversions round to nearest even and keep infinities, signed zeros and subnormals exactly; a
// NaN becomes XLA's: 0x7fc0 with its sign for bfloat16, a quiet NaN keeping the high payload bits
// for float16.
//
// Kokkos' bhalf_t and half_t are plain `float` on host backends (4 bytes), so they cannot be the
// storage of a 2-byte tensor on every backend; these are bit patterns with constexpr conversions
// that compile for host and device alike.
#include <bit>
#include <cstdint>

#include <Kokkos_Macros.hpp>

namespace tessel {

struct bfloat16 {
  std::uint16_t bits = 0;

  constexpr bfloat16() = default;
  KOKKOS_FUNCTION constexpr explicit bfloat16(float f) : bits(round(std::bit_cast<std::uint32_t>(f))) {}
  KOKKOS_FUNCTION constexpr explicit operator float() const { return std::bit_cast<float>(std::uint32_t{bits} << 16); }
  KOKKOS_FUNCTION static constexpr bfloat16 from_bits(std::uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
  friend constexpr bool operator==(bfloat16, bfloat16) = default;  // bitwise (storage identity)

 private:
  KOKKOS_FUNCTION static constexpr std::uint16_t round(std::uint32_t f) {
    if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>(((f >> 16) & 0x8000u) | 0x7fc0u);  // NaN
    f += 0x7fffu + ((f >> 16) & 1u);  // to nearest, ties to even (carries into the exponent: inf)
    return static_cast<std::uint16_t>(f >> 16);
  }
};

struct float16 {
  std::uint16_t bits = 0;

  constexpr float16() = default;
  KOKKOS_FUNCTION constexpr explicit float16(float f) : bits(round(std::bit_cast<std::uint32_t>(f))) {}
  KOKKOS_FUNCTION constexpr explicit operator float() const { return widen(bits); }
  KOKKOS_FUNCTION static constexpr float16 from_bits(std::uint16_t b) {
    float16 h;
    h.bits = b;
    return h;
  }
  friend constexpr bool operator==(float16, float16) = default;

 private:
  KOKKOS_FUNCTION static constexpr std::uint16_t round(std::uint32_t f) {
    std::uint32_t const sign = (f >> 16) & 0x8000u;
    std::uint32_t const a = f & 0x7fffffffu;
    if (a > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu));  // quiet NaN
    if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds past 65504: inf
    if (a >= 0x38800000u) {  // a normal half: rebias the exponent, round the 13 dropped bits
      std::uint32_t const r = a - 0x38000000u;
      return static_cast<std::uint16_t>(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
    }
    if (a < 0x33000000u) return static_cast<std::uint16_t>(sign);  // below half the smallest subnormal
    // A subnormal half: the mantissa with its implicit bit, shifted into place, rounded to even.
    int const shift = 126 - static_cast<int>(a >> 23);  // 14 .. 24
    std::uint32_t const m = (a & 0x7fffffu) | 0x800000u;
    std::uint32_t const kept = m >> shift, rest = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    std::uint32_t const up = rest > half || (rest == half && (kept & 1u));
    return static_cast<std::uint16_t>(sign | (kept + up));
  }
  KOKKOS_FUNCTION static constexpr float widen(std::uint16_t h) {
    std::uint32_t const sign = std::uint32_t{h & 0x8000u} << 16;
    std::uint32_t const e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0x1f)  // inf; a NaN quieted (as F16C widens it), payload kept
      return std::bit_cast<float>(sign | 0x7f800000u | (m << 13) | (m != 0 ? 0x00400000u : 0u));
    if (e != 0) return std::bit_cast<float>(sign | ((e + 112u) << 23) | (m << 13));
    if (m == 0) return std::bit_cast<float>(sign);
    int shift = 0;  // a subnormal half is a normal float: normalize its mantissa
    std::uint32_t mm = m;
    while (!(mm & 0x400u)) {
      mm <<= 1;
      ++shift;
    }
    return std::bit_cast<float>(sign | static_cast<std::uint32_t>(113 - shift) << 23 | ((mm & 0x3ffu) << 13));
  }
};

// v rounded to H and widened back: float(H(v)), what a kernel hands on after each op of a 16-bit
// result. For bfloat16 in 32-bit integer operations only (the same bits), which a compiler
// vectorizes without packing the lanes into 16 bits and unpacking them again.
template <class H>
KOKKOS_FORCEINLINE_FUNCTION constexpr float round_through(float v) {
  return static_cast<float>(H(v));
}
template <>
KOKKOS_FORCEINLINE_FUNCTION constexpr float round_through<bfloat16>(float v) {
  std::uint32_t const f = std::bit_cast<std::uint32_t>(v);
  std::uint32_t const r = (f & 0x7fffffffu) > 0x7f800000u ? (f & 0x80000000u) | 0x7fc00000u  // NaN
                                                          : (f + 0x7fffu + ((f >> 16) & 1u)) & 0xffff0000u;
  return std::bit_cast<float>(r);
}

}  // namespace tessel
