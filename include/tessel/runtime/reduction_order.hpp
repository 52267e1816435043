#pragma once
// The order a row reduction combines its elements in: the bit contract. reduce_row's 64 lanes, their
// tree and the tail are fixed by the row length alone, so a row reduces to the same bits on any
// mesh, any backend and whoever computes it (one thread: SerialRow; a device's team:
// backend/gpu/team_row.hpp). tests/semantics checks the bits against JAX's. Also here: the row
// loops that feed a reduction from memory (RowEval, reduce_row_storing) and the prefetching row
// writer they share with row-fused kernels.
#include <concepts>
#include <cstdint>

#include <Kokkos_Core.hpp>

#include "tessel/core/no_contract.hpp"
#include "tessel/runtime/backend/kernel_traits.hpp"

namespace tessel::detail {

// The distinct memory streams of a row-fused kernel's next row: an expression that reads x in
// several places (LayerNorm reads it in its mean, in its variance and in its output) asks for
// each line once, and broadcast leaves (a row-invariant scale, say) ask for nothing.
struct NextRowStreams {
  static constexpr int capacity = 8;
  char const* base[capacity]{};
  std::int64_t step[capacity]{};  // bytes from element e to e + 1
  int count = 0;
  KOKKOS_INLINE_FUNCTION void add(void const* p, std::int64_t step_bytes) {
    auto const* c = static_cast<char const*>(p);
    for (int i = 0; i < count; ++i)
      if (base[i] == c && step[i] == step_bytes) return;
    if (count < capacity) {  // more streams than that: the rest go unrequested (a hint only)
      base[count] = c;
      step[count] = step_bytes;
      ++count;
    }
  }
};

// Who computes a row's fused reductions in begin_row: the calling thread alone (SerialRow: a host
// work item, a device's one-element work item), or a device's team together
// (backend/gpu/team_row.hpp), whose members share reduce_row's lanes. Either way the lanes,
// their tree and the tail are reduce_row's, so the value has the same bits.
struct SerialRow {
  template <class Op, class T, bool Unit, bool Fused, class Ev>
  KOKKOS_FORCEINLINE_FUNCTION T reduce(Ev const& ev, std::int64_t length, T acc) const;
};

// The number of independent accumulators of a row reduction (reduce_row).
inline constexpr int reduction_lanes = 64;

// Reduces one row of an evaluator into `acc`. 64 independent accumulators break the dependency
// chain of a scalar reduction (four vectors of floats per step, enough for an add's latency):
// lane j takes elements j, j + 64, ... in order, the lanes meet in a tree (j with j + 32, then j
// with j + 16, ...) whose result acc takes, then acc takes the row's last length % 64 elements
// one by one (a row shorter than 64 is summed in order, as XLA does). The order is fixed by the
// row length alone, so a row reduces the same way on any mesh and any backend.
//
// On host CPUs the floating lanes are native vectors (backend::reduce_in_vectors,
// backend/host/lane_vectors.hpp: GCC 14 leaves XLA's max scalar when the lanes are scalars).
template <class Op, class T, bool Unit, bool Fused, class Ev>
KOKKOS_FORCEINLINE_FUNCTION T reduce_row(Ev const& ev_in, std::int64_t length, T acc) {
  constexpr int lanes = reduction_lanes;
  Ev const ev = ev_in;  // a private copy, plainly loop-invariant
  std::int64_t const whole = length - length % lanes;
  T tree{};
  // On host CPUs the lanes are native vectors (the backend's reduce_in_vectors), in this order.
  bool const reduced = backend::reduce_in_vectors<Op, T, Unit, Fused>(ev, whole, tree);
  if (!reduced) {
    T lane[lanes];
    for (int j = 0; j < lanes; ++j) lane[j] = Op::template identity<T>();
    for (std::int64_t e = 0; e < whole; e += lanes) {
      // The block's values in a plain loop first (it vectorizes where the values take math), then
      // into the lanes, each value as it was rounded.
      T values[lanes];
#pragma GCC ivdep
      for (int k = 0; k < lanes; ++k) values[k] = static_cast<T>(ev.template at<Unit, Fused>(e + k));
      for (int j = 0; j < lanes; ++j) lane[j] = Op::combine(lane[j], rounded_operand(values[j]));
    }
    if (whole > 0) {
      for (int width = lanes / 2; width >= 1; width /= 2)
        for (int j = 0; j < width; ++j) lane[j] = Op::combine(lane[j], lane[j + width]);
      tree = lane[0];
    }
  }
  if (whole > 0) acc = Op::combine(acc, tree);
  for (std::int64_t e = whole; e < length; ++e)
    acc = Op::combine(acc, rounded_operand(static_cast<T>(ev.template at<Unit, Fused>(e))));
  return acc;
}

template <class Op, class T, bool Unit, bool Fused, class Ev>
KOKKOS_FORCEINLINE_FUNCTION T SerialRow::reduce(Ev const& ev, std::int64_t length, T acc) const {
  return reduce_row<Op, T, Unit, Fused>(ev, length, acc);
}

// A row of an evaluator as memory: the row-major leaf reduce_row reads after computing it once.
template <class T>
struct RowEval {
  T const* row;
  template <bool Unit, bool Fused>
  KOKKOS_FORCEINLINE_FUNCTION T at(std::int64_t e) const {
    return row[e];
  }
  KOKKOS_FORCEINLINE_FUNCTION T const* row_data() const { return row; }
};

// Writes ev's values at [begin, end) of a row to out[begin, end), in blocks of 64 elements, each
// preceded by requests for the same block of the next row's inputs and of out's next row (rows of
// `length` elements): memory works while this row computes, and the next row's first pass finds
// its data in cache. For kernels that compute a while on each row (row-fused ones). The inputs'
// streams are gathered once per row (NextRowStreams: each distinct stream once).
template <bool Unit, bool Fused, class V, class Ev>
KOKKOS_FORCEINLINE_FUNCTION void write_row_prefetching(Ev const& ev, V* __restrict out, std::int64_t begin,
                                                       std::int64_t end, std::int64_t length) {
  constexpr std::int64_t block = 64, line = 64 / sizeof(V);
  NextRowStreams streams;
  ev.next_row_streams(streams);
  int const nstreams = streams.count;
  std::int64_t e = begin;
  for (; e + block <= end; e += block) {
    for (std::int64_t k = 0; k < block; k += line) {
      for (int i = 0; i < nstreams; ++i) backend::prefetch(streams.base[i] + (e + k) * streams.step[i]);
      backend::prefetch_for_write(out + length + e + k);
    }
#pragma GCC ivdep
    for (std::int64_t k = 0; k < block; ++k) out[e + k] = static_cast<V>(ev.template at<Unit, Fused>(e + k));
  }
#pragma GCC ivdep
  for (; e < end; ++e) out[e] = static_cast<V>(ev.template at<Unit, Fused>(e));
}

// reduce_row that also leaves the row's values in `row` (row_cache.hpp), with the same bits. The
// values are computed in a plain elementwise loop first (it vectorizes like any fused kernel; an
// exp's chain of dependent FMAs has no reduction chain tangled with it), prefetching the next
// row's (write_row_prefetching), then reduced from the row, which is in L1.
template <class Op, class T, bool Unit, class Ev>
KOKKOS_FORCEINLINE_FUNCTION T reduce_row_storing(Ev const& ev_in, std::int64_t length, T acc, T* __restrict row) {
  Ev const ev = ev_in;
  write_row_prefetching<Unit, true>(ev, row, 0, length, length);
  return reduce_row<Op, T, true, true>(RowEval<T>{row}, length, acc);
}

// A mean's sum times the reciprocal of its count, as XLA computes it, the product kept apart from
// its consumers' adds (no FMA), so that a fused kernel and a kernel of its own round it alike;
// other reductions' values as they are.
template <class Op, class C>
KOKKOS_FORCEINLINE_FUNCTION C scaled(C value, C scale) {
  if constexpr (Op::divides) return no_contract_mul(value, scale);
  else return value;
}

}  // namespace tessel::detail
