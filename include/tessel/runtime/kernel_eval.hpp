#pragma once
// Per-device evaluators: the expression type turned into a small struct of pointers and strides
// that a Kokkos kernel copies and calls element by element. A fused region is one such struct, so
// a chain of elementwise ops is one pass over memory with no temporaries.
//
// Protocol: the kernel walks its iteration space row by row; begin_row(idx, outer) fixes the
// leading `outer` coordinates, then at(e) gives the value at position e of the last dimension.
#include <cstdint>

#include <Kokkos_Core.hpp>

#include "tessel/core/shape.hpp"

namespace tessel::detail {

template <class T>
struct LeafEval {
  T const* data = nullptr;
  std::int64_t stride[max_rank]{};  // per iteration-space dimension; 0 where the leaf broadcasts
  std::int64_t base = 0, inner = 0;

  KOKKOS_INLINE_FUNCTION void begin_row(std::int64_t const* idx, int outer) {
    base = 0;
    for (int d = 0; d < outer; ++d) base += idx[d] * stride[d];
    inner = stride[outer];
  }
  KOKKOS_INLINE_FUNCTION T at(std::int64_t e) const { return data[base + e * inner]; }
  template <class F>
  void for_each_leaf(F&& f) {
    f(stride);
  }
};

template <class W>
struct ScalarEval {
  W value{};
  KOKKOS_INLINE_FUNCTION void begin_row(std::int64_t const*, int) {}
  KOKKOS_INLINE_FUNCTION W at(std::int64_t) const { return value; }
  template <class F>
  void for_each_leaf(F&&) {}
};

template <class Op, class Compute, class... Children>
struct NodeEval;

template <class Op, class Compute, class A>
struct NodeEval<Op, Compute, A> {
  A a;
  KOKKOS_INLINE_FUNCTION void begin_row(std::int64_t const* idx, int outer) { a.begin_row(idx, outer); }
  KOKKOS_INLINE_FUNCTION auto at(std::int64_t e) const { return Op::apply(static_cast<Compute>(a.at(e))); }
  template <class F>
  void for_each_leaf(F&& f) {
    a.for_each_leaf(f);
  }
};

template <class Op, class Compute, class A, class B>
struct NodeEval<Op, Compute, A, B> {
  A a;
  B b;
  KOKKOS_INLINE_FUNCTION void begin_row(std::int64_t const* idx, int outer) {
    a.begin_row(idx, outer);
    b.begin_row(idx, outer);
  }
  KOKKOS_INLINE_FUNCTION auto at(std::int64_t e) const {
    return Op::apply(static_cast<Compute>(a.at(e)), static_cast<Compute>(b.at(e)));
  }
  template <class F>
  void for_each_leaf(F&& f) {
    a.for_each_leaf(f);
    b.for_each_leaf(f);
  }
};

// where(c, a, b): the condition stays bool, the branches are converted.
template <class Op, class Compute, class C, class A, class B>
struct NodeEval<Op, Compute, C, A, B> {
  C c;
  A a;
  B b;
  KOKKOS_INLINE_FUNCTION void begin_row(std::int64_t const* idx, int outer) {
    c.begin_row(idx, outer);
    a.begin_row(idx, outer);
    b.begin_row(idx, outer);
  }
  KOKKOS_INLINE_FUNCTION auto at(std::int64_t e) const {
    return Op::apply(static_cast<bool>(c.at(e)), static_cast<Compute>(a.at(e)), static_cast<Compute>(b.at(e)));
  }
  template <class F>
  void for_each_leaf(F&& f) {
    c.for_each_leaf(f);
    a.for_each_leaf(f);
    b.for_each_leaf(f);
  }
};

// A reduction inside a consumer's kernel. Row-fused: begin_row reduces the child over the whole
// row (the row is then in cache for the consumer's own pass) and at() broadcasts the result.
// Otherwise the reduction was computed before the kernel and is read like a tensor.
template <class Op, class T, class Child>
struct ReduceEval {
  bool fused = false;
  LeafEval<T> leaf;
  Child child;
  std::int64_t length = 0;  // row length
  T scale = T(1);           // mean: 1 / length
  T value{};

  KOKKOS_INLINE_FUNCTION void begin_row(std::int64_t const* idx, int outer) {
    if (!fused) {
      leaf.begin_row(idx, outer);
      return;
    }
    child.begin_row(idx, outer);
    T acc = Op::template identity<T>();
    for (std::int64_t e = 0; e < length; ++e) acc = Op::combine(acc, static_cast<T>(child.at(e)));
    value = acc * scale;
  }
  KOKKOS_INLINE_FUNCTION T at(std::int64_t e) const { return fused ? value : leaf.at(e); }
  template <class F>
  void for_each_leaf(F&& f) {
    if (fused) child.for_each_leaf(f);
    else leaf.for_each_leaf(f);
  }
};

}  // namespace tessel::detail
