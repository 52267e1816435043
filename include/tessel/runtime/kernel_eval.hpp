#pragma once
// Per-device evaluators: the expression type turned into a small struct of pointers and strides
// that a Kokkos kernel copies and calls element by element. A fused region is one such struct, so
// a chain of elementwise ops is one pass over memory with no temporaries.
//
// Protocol: the kernel walks its iteration space row by row; begin_row(idx, outer[, row]) fixes the
// leading `outer` coordinates and computes the row's fused reductions (by `row`: see SerialRow),
// then at<Unit>(e) gives the value at position e of the last dimension. step_row(idx, outer, moved,
// extent[, row]) moves on to the next row, whose coordinates idx holds: coordinate `moved` grew by
// one and those after it (up to `outer`) went from extent - 1 to 0. Leaves add and subtract strides
// instead of computing their offset again, which for short rows under many leaves cost more than
// the row's elements. Unit = true promises every
// leaf walks that dimension contiguously (stride 1), which lets the compiler vectorize the row
// loop; kernels check it before choosing that instantiation.
#include "tessel/core/compile_pass.hpp"
#include <cstdint>
#include <utility>

#include <Kokkos_Core.hpp>

#include "tessel/core/dtype.hpp"
#include "tessel/core/no_contract.hpp"
#include "tessel/core/reduce_op.hpp"
#include "tessel/core/shape.hpp"
#include "tessel/expr/ops.hpp"
#include "tessel/runtime/backend/kernel_traits.hpp"
#include "tessel/runtime/kernel_op.hpp"
#include "tessel/runtime/reduction_order.hpp"

namespace tessel::detail {

// Whether an evaluator's value is the same along a row once its reductions are row-fused
// (scalars, reductions and elementwise nodes of those only): such a node computes its value
// once per row, in begin_row.
template <class Ev>
inline constexpr bool row_invariant_v = requires { requires Ev::row_invariant; };

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

// How far a leaf's row offset moves (strides per space dimension) when the row coordinates move on
// to the next row: coordinate `moved` grew by one and every later outer one went back to 0
// (region_space.hpp's next_row_index).
KOKKOS_INLINE_FUNCTION std::int64_t row_offset_step(std::int64_t const* stride, int outer, int moved,
                                                    std::int64_t const* extent) {
  std::int64_t step = stride[moved];
  for (int d = moved + 1; d < outer; ++d) step -= (extent[d] - 1) * stride[d];
  return step;
}

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
  template <class Row = SerialRow>
  KOKKOS_INLINE_FUNCTION void step_row(std::int64_t const*, int outer, int moved, std::int64_t const* extent,
                                       Row const& = {}) {
    base += row_offset_step(stride, outer, moved, extent);
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
  template <class Row = SerialRow>
  KOKKOS_INLINE_FUNCTION void step_row(std::int64_t const*, int, int, std::int64_t const*, Row const& = {}) {}
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
  template <class Row = SerialRow>
  KOKKOS_INLINE_FUNCTION void step_row(std::int64_t const*, int outer, int moved, std::int64_t const* extent,
                                       Row const& = {}) {
    base += row_offset_step(stride, outer, moved, extent);
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
#if TESSEL_NVCC || TESSEL_HIPCC
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
  template <class Row = SerialRow>
  KOKKOS_INLINE_FUNCTION void step_row(std::int64_t const* idx, int outer, int moved, std::int64_t const* extent,
                                       Row const& r = {}) {
    a.step_row(idx, outer, moved, extent, r);
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
  template <class Row = SerialRow>
  KOKKOS_INLINE_FUNCTION void step_row(std::int64_t const* idx, int outer, int moved, std::int64_t const* extent,
                                       Row const& r = {}) {
    a.step_row(idx, outer, moved, extent, r);
    b.step_row(idx, outer, moved, extent, r);
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
  template <class Row = SerialRow>
  KOKKOS_INLINE_FUNCTION void step_row(std::int64_t const* idx, int outer, int moved, std::int64_t const* extent,
                                       Row const& r = {}) {
    c.step_row(idx, outer, moved, extent, r);
    a.step_row(idx, outer, moved, extent, r);
    b.step_row(idx, outer, moved, extent, r);
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
    if (backend::row_memo_read(memo_read, value)) return;  // an earlier equal reduction's, this row
    child.begin_row(idx, outer, r);
    C id = Op::template identity<C>();
    if constexpr (!backend::specializes_rows) value = scaled<Op>(r.template reduce<Op, C, false, false>(child, length, id), scale);
    else if (unit_rows && child_fused) value = scaled<Op>(r.template reduce<Op, C, true, true>(child, length, id), scale);
    else if (unit_rows) value = scaled<Op>(r.template reduce<Op, C, true, false>(child, length, id), scale);
    else if (child_fused) value = scaled<Op>(r.template reduce<Op, C, false, true>(child, length, id), scale);
    else value = scaled<Op>(r.template reduce<Op, C, false, false>(child, length, id), scale);
    if constexpr (HalfFloat<T>) value = C(T(value));
    backend::row_memo_write(memo_write, value);
  }
  // A row-fused reduction reduces the new row.
  template <class Row = SerialRow>
  KOKKOS_INLINE_FUNCTION void step_row(std::int64_t const* idx, int outer, int moved, std::int64_t const* extent,
                                       Row const& r = {}) {
    if (fused) begin_row(idx, outer, r);
    else leaf.step_row(idx, outer, moved, extent);
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
