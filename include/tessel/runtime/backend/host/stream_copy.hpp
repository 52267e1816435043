#pragma once
// Copies whose destination the program will not read again soon (a large collective's or
// reshard's outputs), written around the caches with non-temporal stores. A normal store first
// reads its destination line into the cache (write-allocate): a copy of B bytes then moves 3B,
// not 2B. glibc's memcpy, and so Kokkos::deep_copy, switches to non-temporal stores for large
// copies; a collective without them runs at 2/3 of deep_copy's rate by that alone.
//
// x86 hosts: AVX-512, AVX or SSE2 stores, chosen at compile time; other hosts copy plainly.
#include <cstddef>
#include <cstdint>
#include <cstring>

#include <Kokkos_Core.hpp>

#if defined(__x86_64__)
#include <immintrin.h>
#define TESSEL_STREAM_STORES 1
#endif

namespace tessel::detail {

// Output bytes (of one collective or reshard, all members together) from which its copies stream:
// beyond the last-level cache of a typical host, a later reader finds the data in memory anyway.
inline constexpr std::size_t stream_output_bytes = std::size_t{32} << 20;

// Copies `n` bytes with non-temporal stores (src and dst do not overlap). Those stores are weakly
// ordered: call stream_fence() after the last of them, before this thread's work is seen as done.
inline void stream_copy(std::byte* dst, std::byte const* src, std::size_t n) {
#ifdef TESSEL_STREAM_STORES
#if defined(__AVX512F__)
  constexpr std::size_t width = 64;
#elif defined(__AVX__)
  constexpr std::size_t width = 32;
#else
  constexpr std::size_t width = 16;
#endif
  std::size_t head = (width - reinterpret_cast<std::uintptr_t>(dst) % width) % width;
  if (head > n) head = n;
  // The head and tail copies are usually empty (aligned runs of whole vectors): skip the library
  // calls then, which cost as much as the stores themselves for the 256-byte blocks of a strided copy.
  if (head != 0) std::memcpy(dst, src, head);
  dst += head;
  src += head;
  n -= head;
  for (; n >= width; n -= width, dst += width, src += width) {
#if defined(__AVX512F__)
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst), _mm512_loadu_si512(src));
#elif defined(__AVX__)
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst), _mm256_loadu_si256(reinterpret_cast<__m256i const*>(src)));
#else
    _mm_stream_si128(reinterpret_cast<__m128i*>(dst), _mm_loadu_si128(reinterpret_cast<__m128i const*>(src)));
#endif
  }
  if (n != 0) std::memcpy(dst, src, n);
#else
  std::memcpy(dst, src, n);
#endif
}

inline void stream_fence() {
#ifdef TESSEL_STREAM_STORES
  _mm_sfence();
#endif
}

template <class W>
void stream_copy(W* dst, W const* src, std::int64_t len) {
  stream_copy(reinterpret_cast<std::byte*>(dst), reinterpret_cast<std::byte const*>(src),
              static_cast<std::size_t>(len) * sizeof(W));
}

}  // namespace tessel::detail
