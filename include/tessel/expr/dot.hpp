#pragma once
// lax.dot_general and jnp.matmul. A dot is a fusion boundary: its operands are made into tensors
// (with the shardings the planner picks) and each device multiplies its blocks with a BLAS GEMM.
#include <concepts>

#include "tessel/expr/checks.hpp"
#include "tessel/expr/node.hpp"

namespace tessel {

// Which dimensions of each operand are batch and contracting dimensions (lax.DotDimensionNumbers).
// The result's dimensions are: batch, then lhs free dimensions, then rhs free dimensions.
struct DotDims {
  FixedVector<std::uint8_t, max_rank> lhs_contract, rhs_contract, lhs_batch, rhs_batch;
};

// Every dimension of a dot's operands in its role (XLA's DotConvDimsMapping): batch and
// contracting from the dimension numbers, free (neither), in order. The result's dimensions are
// the batch dimensions, then lhs_free, then rhs_free. Computed once here for the shape check,
// the sharding rule and the local GEMM.
struct DotMapping {
  FixedVector<std::uint8_t, max_rank> lhs_free, rhs_free;
};
constexpr DotMapping dot_mapping(DotDims const& dims, std::size_t lhs_rank, std::size_t rhs_rank) {
  auto free_of = [](auto const& batch, auto const& contract, std::size_t rank) {
    FixedVector<std::uint8_t, max_rank> out;
    for (std::size_t d = 0; d < rank; ++d) {
      bool bound = false;
      for (auto b : batch) bound = bound || b == d;
      for (auto c : contract) bound = bound || c == d;
      if (!bound) out.push_back(static_cast<std::uint8_t>(d));
    }
    return out;
  };
  return {free_of(dims.lhs_batch, dims.lhs_contract, lhs_rank), free_of(dims.rhs_batch, dims.rhs_contract, rhs_rank)};
}

struct Dot {
  static constexpr NodeKind kind = NodeKind::dot;
  struct Data {
    DotDims dims;
    Shape shape;
  };
  template <class Lhs, class Rhs>
  using value_type = promote_t<expr_value_t<Lhs>, expr_value_t<Rhs>>;
  static Shape const& shape(Data const& d) { return d.shape; }
  static constexpr char const* name(Data const&) { return "dot_general"; }
  static void describe(Data const& d, auto& node, auto&) { node.dot = d.dims; }
  static void sign(Data const& d, Shape const&, auto& sink) {
    for (auto const* list : {&d.dims.lhs_contract, &d.dims.rhs_contract, &d.dims.lhs_batch, &d.dims.rhs_batch}) {
      for (auto n : *list) sink.word(n);
      sink.word(0xfffe);
    }
  }
};
template <class Lhs, class Rhs>
using DotNode = Node<Dot, Lhs, Rhs>;

namespace detail {
// Checks the dimension numbers against both shapes (naming the dimensions and sizes that
// disagree) and returns the result's shape.
Shape dot_shape(Shape const& lhs, Shape const& rhs, DotDims const& dims);
}  // namespace detail

template <class A, class B>
  requires(Operand<A> && Operand<B> && !std::is_arithmetic_v<std::remove_cvref_t<A>> &&
           !std::is_arithmetic_v<std::remove_cvref_t<B>>)
auto dot_general(A const& a, B const& b, DotDims const& dims) {
  auto l = as_node(a);
  auto r = as_node(b);
  using V = promote_t<expr_value_t<decltype(l)>, expr_value_t<decltype(r)>>;
  static_assert(std::floating_point<V>, "tessel: dot_general multiplies float32 or float64 (BLAS GEMM); use astype<float>()");
  detail::check_same_devices("dot_general", detail::mesh_of(l), detail::mesh_of(r));
  return DotNode<decltype(l), decltype(r)>{{l, r}, {dims, detail::dot_shape(l.shape(), r.shape(), dims)}};
}

namespace detail {
// jnp.matmul's dimension numbers for these shapes (1-D operands promoted and squeezed, leading
// batch dimensions broadcast). Fails naming both shapes when jnp.matmul refuses them, and when
// jnp.matmul's result would need its operands squeezed or its result transposed (leading
// dimensions on one side only, or a size-1 batch dimension broadcast), which tessel does not do yet.
DotDims matmul_dims(Shape const& a, Shape const& b);
}  // namespace detail

// jnp.matmul: contracts a's last dimension with b's second-to-last (b's only one when 1-D).
// Supported: either operand 1-D; b 2-D (a's leading dimensions are a stack of matrices); equal
// ranks with equal batch dimensions. Other broadcasts are refused with a message.
template <class A, class B>
auto matmul(A const& a, B const& b) {
  return dot_general(a, b, detail::matmul_dims(as_node(a).shape(), as_node(b).shape()));
}

}  // namespace tessel
