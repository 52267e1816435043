#pragma once
// Per-device evaluators: the expression type turned into a small struct of pointers and strides
// that a Kokkos kernel copies and calls element by element. A fused region is one such struct, so
// a chain of elementwise ops is one pass over memory with no temporaries.
//
// Protocol: the kernel walks its iteration space row by row; begin_row(idx, outer[, row]) fixes the
// leading `outer` coordinates and computes the row's fused reductions (by `row`: see SerialRow),
// then at<Unit>(e) gives the value at position e of the last dimension. Unit = true promises every
// leaf walks that dimension contiguously (stride 1), which lets the compiler vectorize the row
// loop; kernels check it before choosing that instantiation.
#include <cstdint>
#include <utility>

#include <Kokkos_Core.hpp>

#include "tessel/core/dtype.hpp"
#include "tessel/core/no_contract.hpp"
#include "tessel/core/reduce_op.hpp"
#include "tessel/core/shape.hpp"
#include "tessel/expr/ops.hpp"
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

// Whether an evaluator's value is the same along a row once its reductions are row-fused
// (scalars, reductions and elementwise nodes of those only): such a node computes its value
// once per row, in begin_row.
template <class Ev>
inline constexpr bool row_invariant_v = requires { requires Ev::row_invariant; };

// Who computes a row's fused reductions in begin_row: the calling thread alone (SerialRow: a host
// work item, a device's one-element work item), or a device's team together
// (backend/device/team_row.hpp), whose members share reduce_row's lanes. Either way the lanes,
// their tree and the tail are reduce_row's, so the value has the same bits.
struct SerialRow {
  template <class Op, class T, bool Unit, bool Fused, class Ev>
  KOKKOS_FORCEINLINE_FUNCTION T reduce(Ev const& ev, std::int64_t length, T acc) const;
};

// One leaf of an evaluator, as for_each_leaf shows it: its strides (every leaf's take part in
// collapsing the space; only those of leaves that read memory decide whether rows are walked
// contiguously, Unit), the memory it reads and its first coordinate (an iota's). Two devices
// whose evaluators show the same leaves compute the same block (fused_kernel shares it).
struct LeafRef {
  std::int64_t* stride;
  void const* data;
  std::int64_t start;
  bool reads_memory;
};

template <class T>
struct LeafEval {
  T const* data = nullptr;
  std::int64_t stride[max_rank]{};  // per iteration-space dimension; 0 where the leaf broadcasts
  std::int64_t base = 0, inner = 0;
  std::int64_t next_row = 0;  // from a position to the same position of the next row

  template <class Row = SerialRow>
  KOKKOS_INLINE_FUNCTION void begin_row(std::int64_t const* idx, int outer, Row const& = {}) {
    base = 0;
    for (int d = 0; d < outer; ++d) base += idx[d] * stride[d];
    inner = stride[outer];
    next_row = outer > 0 ? stride[outer - 1] : 0;
  }
  // Asks for position e of the next row ahead of time (a hint: rows that compute a lot while the
  // next row's memory is idle hide its latency this way).
  KOKKOS_FORCEINLINE_FUNCTION void prefetch_next_row(std::int64_t e) const {
    backend::prefetch(data + base + next_row + e * inner);
  }
  KOKKOS_INLINE_FUNCTION void next_row_streams(NextRowStreams& s) const {
    if (next_row != 0) s.add(data + base + next_row, inner * static_cast<std::int64_t>(sizeof(T)));
  }
  template <bool Unit, bool Fused = false>
  KOKKOS_FORCEINLINE_FUNCTION T at(std::int64_t e) const {
    if constexpr (Unit) return data[base + e];
    else return data[base + e * inner];
  }
  // The row's first element (rows walked contiguously).
  KOKKOS_FORCEINLINE_FUNCTION T const* row_data() const { return data + base; }
  // f(LeafRef) for each leaf.
  template <class F>
  void for_each_leaf(F&& f) {
    f(LeafRef{stride, data, 0, true});
  }
  [[nodiscard]] bool all_reduces_fused() const { return true; }
};

template <class W>
struct ScalarEval {
  static constexpr bool row_invariant = true;
  W value{};
  template <class Row = SerialRow>
  KOKKOS_INLINE_FUNCTION void begin_row(std::int64_t const*, int, Row const& = {}) {}
  template <bool Unit, bool Fused = false>
  KOKKOS_FORCEINLINE_FUNCTION W at(std::int64_t) const {
    return value;
  }
  KOKKOS_FORCEINLINE_FUNCTION void prefetch_next_row(std::int64_t) const {}
  KOKKOS_INLINE_FUNCTION void next_row_streams(NextRowStreams&) const {}
  template <class F>
  void for_each_leaf(F&&) {}
  [[nodiscard]] bool all_reduces_fused() const { return true; }
};

// An iota leaf: the coordinate along one dimension, computed (no memory read). Its strides (1
// along its dimension, 0 elsewhere) take part in collapsing the space like a tensor's, but not in
// deciding Unit: it reads no memory, so it steps by `inner` either way (a causal mask's row
// coordinate, constant along the row, leaves the kernel's loads contiguous and vectorized).
template <class T>
struct IotaEval {
  std::int64_t stride[max_rank]{};
  std::int64_t start = 0;  // this device's first coordinate along the dimension
  std::int64_t base = 0, inner = 0;

  template <class Row = SerialRow>
  KOKKOS_INLINE_FUNCTION void begin_row(std::int64_t const* idx, int outer, Row const& = {}) {
    base = start;
    for (int d = 0; d < outer; ++d) base += idx[d] * stride[d];
    inner = stride[outer];
  }
  KOKKOS_FORCEINLINE_FUNCTION void prefetch_next_row(std::int64_t) const {}
  KOKKOS_INLINE_FUNCTION void next_row_streams(NextRowStreams&) const {}
  template <bool Unit, bool Fused = false>
  KOKKOS_FORCEINLINE_FUNCTION T at(std::int64_t e) const {
    return static_cast<T>(base + e * inner);
  }
  template <class F>
  void for_each_leaf(F&& f) {
    f(LeafRef{stride, nullptr, start, false});
  }
  [[nodiscard]] bool all_reduces_fused() const { return true; }
};

// An op whose result is a 16-bit float: computed in float, rounded to R, handed on as a float.
// XLA:CPU rounds after every op this way (tests/data/jax_half/README.md), inside fused loops too.
template <class Op, class R>
struct RoundedTo {
  template <class... Args>
  KOKKOS_FORCEINLINE_FUNCTION static float apply(Args... args) {
    return round_through<R>(Op::apply(args...));
  }
};
// The op a kernel runs for a node of op Op and result type R (conversions round by themselves).
template <class Op, class R>
struct kernel_op {
  using type = Op;
};
template <class Op, HalfFloat R>
struct kernel_op<Op, R> {
  using type = RoundedTo<Op, R>;
};
template <class To, HalfFloat R>
struct kernel_op<ops::convert<To>, R> {
  using type = ops::convert<To>;
};
// jax.nn.sigmoid and jax.nn.gelu are compositions of primitive ops in JAX, and each of those rounds
// on a 16-bit float: neg, exp, 1 +, 1 / (sigmoid); x*x, *x, *c1, x +, *c2, tanh, 1 +, *0.5, x *
// (gelu, its constants rounded to R first, as weak scalars are).
template <HalfFloat R>
struct kernel_op<ops::sigmoid, R> {
  struct type {
    KOKKOS_FORCEINLINE_FUNCTION static float apply(float x) {
      auto r = [](float v) { return round_through<R>(v); };
      return r(1.0f / r(1.0f + r(math::exp(-x))));
    }
  };
};
template <HalfFloat R>
struct kernel_op<ops::gelu, R> {
  struct type {
    KOKKOS_FORCEINLINE_FUNCTION static float apply(float x) {
      auto r = [](float v) { return round_through<R>(v); };
      constexpr float c1 = static_cast<float>(R(0.044715f)), c2 = static_cast<float>(R(0.7978845608028654f));
      float const x3 = r(r(x * x) * x);
      float const t = r(math::tanh(r(c2 * r(x + r(c1 * x3)))));
      return r(x * r(r(1.0f + t) * 0.5f));
    }
  };
};
template <class Op, class R>
using kernel_op_t = typename kernel_op<Op, R>::type;

template <class Op, class Compute, class... Children>
struct NodeEval;

// The value a node of row-invariant children holds for the row (begin_row computes it once, so
// the row loop does not recompute, say, LayerNorm's rsqrt(var + eps) per element or per block);
// nothing for other nodes. at<Unit, Fused = true> reads it: every reduction is row-fused then, so
// the children's values are the row's. Without Fused the node computes as before (a reduction
// that is not row-fused varies along the row). The value is computed by the same operations, so
// the results keep their bits.
// Other nodes hold an empty RowValue: no bytes on host compilers ([[no_unique_address]]); under
// nvcc and hipcc a plain member, since nvcc 13 lays out a member after a [[no_unique_address]] one
// at another offset in device code than in host code (a kernel then read its evaluator, and the
// output pointer after it, from the wrong place).
#if defined(__CUDACC__) || defined(__HIPCC__)
#define TESSEL_DETAIL_NO_UNIQUE_ADDRESS
#else
#define TESSEL_DETAIL_NO_UNIQUE_ADDRESS [[no_unique_address]]
#endif
template <bool Invariant, class R>
struct RowValue {
  R value{};
};
template <class R>
struct RowValue<false, R> {};

template <class Op, class Compute, class A>
struct NodeEval<Op, Compute, A> {
  using R = decltype(Op::apply(std::declval<Compute>()));
  static constexpr bool row_invariant = row_invariant_v<A>;
  A a;
  TESSEL_DETAIL_NO_UNIQUE_ADDRESS RowValue<row_invariant, R> row{};
  template <class Row = SerialRow>
  KOKKOS_INLINE_FUNCTION void begin_row(std::int64_t const* idx, int outer, Row const& r = {}) {
    a.begin_row(idx, outer, r);
    if constexpr (row_invariant) row.value = apply<true, true>(0);
  }
  template <bool Unit, bool Fused = false>
  KOKKOS_FORCEINLINE_FUNCTION auto at(std::int64_t e) const {
    if constexpr (row_invariant && Fused) return row.value;
    else return apply<Unit, Fused>(e);
  }
  template <bool Unit, bool Fused>
  KOKKOS_FORCEINLINE_FUNCTION R apply(std::int64_t e) const {
    return Op::apply(static_cast<Compute>(a.template at<Unit, Fused>(e)));
  }
  KOKKOS_FORCEINLINE_FUNCTION void prefetch_next_row(std::int64_t e) const { a.prefetch_next_row(e); }
  KOKKOS_INLINE_FUNCTION void next_row_streams(NextRowStreams& s) const { a.next_row_streams(s); }
  template <class F>
  void for_each_leaf(F&& f) {
    a.for_each_leaf(f);
  }
  [[nodiscard]] bool all_reduces_fused() const { return a.all_reduces_fused(); }
};

template <class Op, class Compute, class A, class B>
struct NodeEval<Op, Compute, A, B> {
  using R = decltype(Op::apply(std::declval<Compute>(), std::declval<Compute>()));
  static constexpr bool row_invariant = row_invariant_v<A> && row_invariant_v<B>;
  A a;
  B b;
  TESSEL_DETAIL_NO_UNIQUE_ADDRESS RowValue<row_invariant, R> row{};
  template <class Row = SerialRow>
  KOKKOS_INLINE_FUNCTION void begin_row(std::int64_t const* idx, int outer, Row const& r = {}) {
    a.begin_row(idx, outer, r);
    b.begin_row(idx, outer, r);
    if constexpr (row_invariant) row.value = apply<true, true>(0);
  }
  template <bool Unit, bool Fused = false>
  KOKKOS_FORCEINLINE_FUNCTION auto at(std::int64_t e) const {
    if constexpr (row_invariant && Fused) return row.value;
    else return apply<Unit, Fused>(e);
  }
  template <bool Unit, bool Fused>
  KOKKOS_FORCEINLINE_FUNCTION R apply(std::int64_t e) const {
    return Op::apply(static_cast<Compute>(a.template at<Unit, Fused>(e)),
                     static_cast<Compute>(b.template at<Unit, Fused>(e)));
  }
  KOKKOS_FORCEINLINE_FUNCTION void prefetch_next_row(std::int64_t e) const {
    a.prefetch_next_row(e);
    b.prefetch_next_row(e);
  }
  KOKKOS_INLINE_FUNCTION void next_row_streams(NextRowStreams& s) const {
    a.next_row_streams(s);
    b.next_row_streams(s);
  }
  template <class F>
  void for_each_leaf(F&& f) {
    a.for_each_leaf(f);
    b.for_each_leaf(f);
  }
  [[nodiscard]] bool all_reduces_fused() const { return a.all_reduces_fused() && b.all_reduces_fused(); }
};

// where(c, a, b): the condition stays bool, the branches are converted.
template <class Op, class Compute, class C, class A, class B>
struct NodeEval<Op, Compute, C, A, B> {
  using R = decltype(Op::apply(true, std::declval<Compute>(), std::declval<Compute>()));
  static constexpr bool row_invariant = row_invariant_v<C> && row_invariant_v<A> && row_invariant_v<B>;
  C c;
  A a;
  B b;
  TESSEL_DETAIL_NO_UNIQUE_ADDRESS RowValue<row_invariant, R> row{};
  template <class Row = SerialRow>
  KOKKOS_INLINE_FUNCTION void begin_row(std::int64_t const* idx, int outer, Row const& r = {}) {
    c.begin_row(idx, outer, r);
    a.begin_row(idx, outer, r);
    b.begin_row(idx, outer, r);
    if constexpr (row_invariant) row.value = apply<true, true>(0);
  }
  template <bool Unit, bool Fused = false>
  KOKKOS_FORCEINLINE_FUNCTION auto at(std::int64_t e) const {
    if constexpr (row_invariant && Fused) return row.value;
    else return apply<Unit, Fused>(e);
  }
  template <bool Unit, bool Fused>
  KOKKOS_FORCEINLINE_FUNCTION R apply(std::int64_t e) const {
    return Op::apply(static_cast<bool>(c.template at<Unit, Fused>(e)), static_cast<Compute>(a.template at<Unit, Fused>(e)),
                     static_cast<Compute>(b.template at<Unit, Fused>(e)));
  }
  KOKKOS_FORCEINLINE_FUNCTION void prefetch_next_row(std::int64_t e) const {
    c.prefetch_next_row(e);
    a.prefetch_next_row(e);
    b.prefetch_next_row(e);
  }
  KOKKOS_INLINE_FUNCTION void next_row_streams(NextRowStreams& s) const {
    c.next_row_streams(s);
    a.next_row_streams(s);
    b.next_row_streams(s);
  }
  template <class F>
  void for_each_leaf(F&& f) {
    c.for_each_leaf(f);
    a.for_each_leaf(f);
    b.for_each_leaf(f);
  }
  [[nodiscard]] bool all_reduces_fused() const {
    return c.all_reduces_fused() && a.all_reduces_fused() && b.all_reduces_fused();
  }
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
// On host CPUs the floating lanes are native vectors (backend/host/lane_vectors.hpp: GCC 14 leaves XLA's max
// scalar when the lanes are scalars), fed straight from a contiguous row, or from blocks of
// values that a plain loop (vectorized as any fused kernel) computes into L1.
template <class Op, class T, bool Unit, bool Fused, class Ev>
KOKKOS_FORCEINLINE_FUNCTION T reduce_row(Ev const& ev_in, std::int64_t length, T acc) {
  constexpr int lanes = reduction_lanes;
  Ev const ev = ev_in;  // a private copy, plainly loop-invariant
  std::int64_t const whole = length - length % lanes;
  T tree{};
  bool reduced = false;  // the lanes were native vectors, and `tree` holds their tree
#ifdef TESSEL_LANE_VECTORS
  if constexpr (std::same_as<T, float> || std::same_as<T, double>) {
    static_assert(LaneVectors<T>::lanes == lanes);
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
    reduced = true;
  }
#endif
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

// A reduction inside a consumer's kernel. Row-fused: begin_row reduces the child over the whole
// row (the row is then in cache for the consumer's own pass) and at() broadcasts the result.
// Otherwise the reduction was computed before the kernel and is read like a tensor.
template <class Op, class T, class Child>
struct ReduceEval {
  // 16-bit floats accumulate in float; the result rounds to T, as it does when the reduction is
  // stored apart, so fusing it changes no bit.
  using C = compute_t<T>;
  static constexpr bool row_invariant = true;  // under Fused (see RowValue)
  bool fused = false;
  LeafEval<T> leaf;
  Child child;
  std::int64_t length = 0;  // row length
  C scale = C(1);           // mean: 1 / the row length (XLA multiplies a sum by its count's reciprocal)
  bool unit_rows = false;   // the child's leaves walk the row contiguously
  bool child_fused = false; // every reduction inside the child is row-fused too
  std::int8_t memo_write = -1, memo_read = -1;  // row_memo slots (row-fused only), or -1
  C value{};

  template <class Row = SerialRow>
  KOKKOS_INLINE_FUNCTION void begin_row(std::int64_t const* idx, int outer, Row const& r = {}) {
    if (!fused) {
      leaf.begin_row(idx, outer);
      return;
    }
#ifdef TESSEL_ROW_MEMO
    if (memo_read >= 0) {  // an earlier reduction of this row computed the same value
      value = row_memo<C>[memo_read];
      return;
    }
#endif
    child.begin_row(idx, outer, r);
    C id = Op::template identity<C>();
    if constexpr (!backend::specializes_rows) value = scaled<Op>(r.template reduce<Op, C, false, false>(child, length, id), scale);
    else if (unit_rows && child_fused) value = scaled<Op>(r.template reduce<Op, C, true, true>(child, length, id), scale);
    else if (unit_rows) value = scaled<Op>(r.template reduce<Op, C, true, false>(child, length, id), scale);
    else if (child_fused) value = scaled<Op>(r.template reduce<Op, C, false, true>(child, length, id), scale);
    else value = scaled<Op>(r.template reduce<Op, C, false, false>(child, length, id), scale);
    if constexpr (HalfFloat<T>) value = C(T(value));
#ifdef TESSEL_ROW_MEMO
    if (memo_write >= 0) row_memo<C>[memo_write] = value;
#endif
  }
  // Fused = true promises every reduction in the tree is row-fused, so the row loop has no
  // branch on it and vectorizes; kernels check all_reduces_fused() before choosing it.
  template <bool Unit, bool Fused = false>
  KOKKOS_FORCEINLINE_FUNCTION C at(std::int64_t e) const {
    if constexpr (Fused) return value;
    else return fused ? value : C(leaf.template at<Unit>(e));
  }
  KOKKOS_FORCEINLINE_FUNCTION void prefetch_next_row(std::int64_t e) const {
    if (fused) child.prefetch_next_row(e);
    else leaf.prefetch_next_row(e);
  }
  KOKKOS_INLINE_FUNCTION void next_row_streams(NextRowStreams& s) const {
    if (fused) child.next_row_streams(s);
    else leaf.next_row_streams(s);
  }
  template <class F>
  void for_each_leaf(F&& f) {
    if (fused) child.for_each_leaf(f);
    else leaf.for_each_leaf(f);
  }
  [[nodiscard]] bool all_reduces_fused() const { return fused && child.all_reduces_fused(); }
};

}  // namespace tessel::detail
