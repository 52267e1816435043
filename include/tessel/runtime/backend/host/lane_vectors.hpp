#pragma once
// The accumulators of a row reduction (kernel_eval.hpp's reduce_row) as native vectors of the host
// CPU, through the GCC/Clang vector extension. Left to the compiler, scalar lanes are vectorized by
// its SLP pass or not: GCC 14 leaves XLA's max/min (selects for NaN and signed zeros) scalar,
// building nothing but vmaxss and vucomiss. Written as vector operations, they are vector selects
// whatever the compiler version. Lane j accumulates elements j, j + lanes, ... of the row in
// order, as the scalar lanes do, so the result has the same bits on every vector width.
//
// For kernels compiled for a host CPU (backend/kernel_traits.hpp includes it for host backends and
// for CPU builds of the device shapes); compilers without the extension keep the scalar lanes.
#include <concepts>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include <Kokkos_Core.hpp>

#include "tessel/core/reduce_op.hpp"

#if defined(__GNUC__) || defined(__clang__)
#define TESSEL_LANE_VECTORS 1
#endif

namespace tessel::detail {

#ifdef TESSEL_LANE_VECTORS

#if defined(__AVX512F__)
inline constexpr int native_vector_bytes = 64;
#elif defined(__AVX__)
inline constexpr int native_vector_bytes = 32;
#else
inline constexpr int native_vector_bytes = 16;
#endif

// The native vector of T and the integer vector of its bits (the attribute needs a concrete type).
template <class T>
struct native_vector;
template <>
struct native_vector<float> {
  typedef float type __attribute__((vector_size(native_vector_bytes)));
  typedef std::int32_t bits __attribute__((vector_size(native_vector_bytes)));
};
template <>
struct native_vector<double> {
  typedef double type __attribute__((vector_size(native_vector_bytes)));
  typedef std::int64_t bits __attribute__((vector_size(native_vector_bytes)));
};

template <class T>
  requires std::same_as<T, float> || std::same_as<T, double>
struct LaneVectors {
  // Four AVX-512 vectors of floats: independent chains enough to hide an add's latency.
  static constexpr int lanes = 64;
  static constexpr int per_vector = native_vector_bytes / static_cast<int>(sizeof(T));
  static constexpr int vectors = lanes / per_vector;
  using V = typename native_vector<T>::type;
  using Bits = typename native_vector<T>::bits;

  V v[vectors];

  explicit LaneVectors(T identity) {
    for (int k = 0; k < vectors; ++k)
      for (int j = 0; j < per_vector; ++j) v[k][j] = identity;
  }

  // xla::add / mul / max / min (xla_scalar.hpp), lane by lane.
  template <ReduceOp op>
  static V combine(V a, V b) {
    if constexpr (op == ReduceOp::sum) {
      return a + b;
    } else if constexpr (op == ReduceOp::prod) {
      return a * b;
    } else {
      constexpr bool is_max = op == ReduceOp::max;
      V m = is_max ? (a > b ? a : b) : (a < b ? a : b);
      V const equal = is_max ? reinterpret_cast<V>(reinterpret_cast<Bits>(a) & reinterpret_cast<Bits>(b))
                             : reinterpret_cast<V>(reinterpret_cast<Bits>(a) | reinterpret_cast<Bits>(b));
      m = a == b ? equal : m;
      m = b != b ? b : m;
      return a != a ? a : m;
    }
  }

  // Lane j += values[j] for every lane.
  template <ReduceOp op>
  void add(T const* values) {
    for (int k = 0; k < vectors; ++k) {
      V x;
      std::memcpy(&x, values + k * per_vector, sizeof x);
      v[k] = combine<op>(v[k], x);
    }
  }

  // The lanes' tree (lane j with j + 32, then j with j + 16, ... down to lane 0, reduce_row's
  // order, with lane j always the left operand) in registers: whole vectors first, then halves of
  // the first vector by shuffles. Storing the lanes and combining them from memory instead waits
  // on store forwarding at every level, which a short row (LayerNorm's 1024 elements) pays per
  // reduction.
  template <ReduceOp op>
  [[gnu::always_inline]] T tree() const {
    V w[vectors];
    for (int k = 0; k < vectors; ++k) w[k] = v[k];
    for (int n = vectors / 2; n >= 1; n /= 2)
      for (int k = 0; k < n; ++k) w[k] = combine<op>(w[k], w[k + n]);
    return halves<op, per_vector / 2>(w[0]);
  }

 private:
  // w's lanes [0, 2 width) combined down to lane 0, lane j with lane j + width at each level.
  template <ReduceOp op, int width>
  [[gnu::always_inline]] static T halves(V w) {
    if constexpr (width == 0) {
      return w[0];
    } else {
      return halves<op, width / 2>(combine<op>(w, shifted<width>(w, std::make_integer_sequence<int, per_vector>{})));
    }
  }
  // Lane j of the result is w's lane j + width (lanes past the end keep their own).
  template <int width, int... I>
  [[gnu::always_inline]] static V shifted(V w, std::integer_sequence<int, I...>) {
    return __builtin_shufflevector(w, w, (I + width < per_vector ? I + width : I)...);
  }
};

#endif

}  // namespace tessel::detail

namespace tessel::backend {

// reduce_row's whole 64-element blocks of a row of ev, each lane j taking elements j, j + 64, ... in
// native vectors, then their tree into `tree`: true for float and double (with the compilers that
// have vector types), false to leave the row to reduce_row's scalar lanes (the same order, so the
// same bits). Fed straight from a contiguous row (an evaluator with row_data()), or from blocks of
// values that a plain loop (vectorized as any fused kernel) computes into L1.
template <class Op, class T, bool Unit, bool Fused, class Ev>
KOKKOS_FORCEINLINE_FUNCTION bool reduce_in_vectors([[maybe_unused]] Ev const& ev, [[maybe_unused]] std::int64_t whole,
                                                   [[maybe_unused]] T& tree) {
#ifdef TESSEL_LANE_VECTORS
  if constexpr (std::same_as<T, float> || std::same_as<T, double>) {
    using detail::LaneVectors;
    constexpr int lanes = LaneVectors<T>::lanes;
    LaneVectors<T> vectors(Op::template identity<T>());
    if constexpr (Unit && requires { { ev.row_data() } -> std::same_as<T const*>; }) {
      T const* row = ev.row_data();
      for (std::int64_t e = 0; e < whole; e += lanes) vectors.template add<Op::combiner>(row + e);
    } else {
      T values[lanes];
      for (std::int64_t e = 0; e < whole; e += lanes) {
#pragma GCC ivdep
        for (int k = 0; k < lanes; ++k) values[k] = static_cast<T>(ev.template at<Unit, Fused>(e + k));
        vectors.template add<Op::combiner>(values);
      }
    }
    tree = vectors.template tree<Op::combiner>();
    return true;
  }
#endif
  return false;
}

}  // namespace tessel::backend
