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

// jax.lax.dot_general's preferred_element_type: the result's dtype when it is not the operands'
// promoted one (bfloat16 operands with a float32 result, say).
template <Element T>
struct PreferredElementType {
  using type = T;
};
template <Element T>
inline constexpr PreferredElementType<T> preferred_element_type{};

template <class Preferred>
struct DotAs {
  static constexpr NodeKind kind = NodeKind::dot;
  struct Data {
    DotDims dims;
    Shape shape;
  };
  template <class Lhs, class Rhs>
  using value_type = std::conditional_t<std::is_void_v<Preferred>, promote_t<expr_value_t<Lhs>, expr_value_t<Rhs>>, Preferred>;
  static constexpr Shape const& shape(Data const& d) { return d.shape; }
  static constexpr char const* name(Data const&) { return "dot_general"; }
  static constexpr void describe(Data const& d, auto& node, auto&) { node.dot = d.dims; }
  static void sign(Data const& d, Shape const&, auto& sink) {
    for (auto const* list : {&d.dims.lhs_contract, &d.dims.rhs_contract, &d.dims.lhs_batch, &d.dims.rhs_batch}) {
      for (auto n : *list) sink.word(n);
      sink.word(0xfffe);
    }
  }
};
using Dot = DotAs<void>;
template <class Lhs, class Rhs, class Preferred = void>
using DotNode = Node<DotAs<Preferred>, Lhs, Rhs>;

namespace detail {

constexpr void append_dims(Message& m, FixedVector<std::uint8_t, max_rank> const& dims) {
  m << "(";
  for (std::size_t i = 0; i < dims.size(); ++i) m << (i ? ", " : "") << dims[i];
  m << (dims.size() == 1 ? ",)" : ")");
}

// One operand's side of lax.dot_general's checks, with jax's wording: every dimension in range,
// none named twice, batch and contracting dimensions disjoint. The message, empty when fine.
constexpr Message dot_side_error(char const* side, Shape const& shape, FixedVector<std::uint8_t, max_rank> const& batch,
                                 FixedVector<std::uint8_t, max_rank> const& contract) {
  Message m;
  for (auto const* what : {"contracting", "batch"}) {
    auto const& dims = what[0] == 'c' ? contract : batch;
    for (auto d : dims)
      if (d >= shape.size()) {
        m << "dot_general: " << side << " " << what << " dimension " << d << " is out of range for shape " << shape
          << " (rank " << shape.size() << ")";
        return m;
      }
  }
  for (auto const* what : {"contracting", "batch"}) {
    auto const& dims = what[0] == 'c' ? contract : batch;
    for (std::size_t i = 0; i < dims.size(); ++i)
      for (std::size_t j = 0; j < i; ++j)
        if (dims[i] == dims[j]) {
          m << "dot_general requires " << side << " " << what << " dimensions ";
          append_dims(m, dims);
          m << " to be distinct; dimension " << dims[i] << " appears twice";
          return m;
        }
  }
  for (auto d : batch)
    for (auto c : contract)
      if (d == c) {
        m << "dot_general requires " << side << " batch dimensions ";
        append_dims(m, batch);
        m << " and " << side << " contracting dimensions ";
        append_dims(m, contract);
        m << " to be disjoint; dimension " << d << " is in both";
        return m;
      }
  return m;
}

// Checks the dimension numbers against both shapes (naming the dimensions and sizes that
// disagree) and returns the result's shape.
constexpr Shape dot_shape(Shape const& lhs, Shape const& rhs, DotDims const& dims, StaticErrors* errors = nullptr) {
  Message m;
  for (auto const* what : {"contracting", "batch"}) {
    auto const& l = what[0] == 'c' ? dims.lhs_contract : dims.lhs_batch;
    auto const& r = what[0] == 'c' ? dims.rhs_contract : dims.rhs_batch;
    if (m.empty() && l.size() != r.size()) {
      m << "dot_general requires equal numbers of lhs and rhs " << what << " dimensions, got lhs ";
      append_dims(m, l);
      m << " and rhs ";
      append_dims(m, r);
    }
  }
  if (m.empty()) m = dot_side_error("lhs", lhs, dims.lhs_batch, dims.lhs_contract);
  if (m.empty()) m = dot_side_error("rhs", rhs, dims.rhs_batch, dims.rhs_contract);
  for (auto const* what : {"contracting", "batch"}) {
    auto const& l = what[0] == 'c' ? dims.lhs_contract : dims.lhs_batch;
    auto const& r = what[0] == 'c' ? dims.rhs_contract : dims.rhs_batch;
    for (std::size_t i = 0; i < l.size() && m.empty(); ++i)
      if (lhs[l[i]] != rhs[r[i]])
        m << "dot_general: " << what << " dimension " << l[i] << " of lhs " << lhs << " has size " << lhs[l[i]] << " but "
          << what << " dimension " << r[i] << " of rhs " << rhs << " has size " << rhs[r[i]];
  }
  if (!m.empty()) {
    check_failed(m, errors);
    return lhs;
  }
  DotMapping const map = dot_mapping(dims, lhs.size(), rhs.size());
  Shape out;
  for (auto d : dims.lhs_batch) out.push_back(lhs[d]);
  for (auto d : map.lhs_free) out.push_back(lhs[d]);
  for (auto d : map.rhs_free) out.push_back(rhs[d]);
  return out;
}

}  // namespace detail

// Operands of different float dtypes multiply in their promoted type, as in JAX (bfloat16 with
// float32 is a float32 dot); 16-bit floats accumulate in float32 and round once.
template <class A, class B, class Preferred = void>
  requires(Operand<A> && Operand<B> && !std::is_arithmetic_v<std::remove_cvref_t<A>> &&
           !std::is_arithmetic_v<std::remove_cvref_t<B>>)
constexpr auto dot_general(A const& a, B const& b, DotDims const& dims) {
  auto l = as_node(a);
  auto r = as_node(b);
  using V = promote_t<expr_value_t<decltype(l)>, expr_value_t<decltype(r)>>;
  static_assert(FloatingElement<V>,
                "tessel: dot_general multiplies floats (BLAS GEMM: float32, float64, bfloat16, float16); use astype<float>()");
  detail::check_same_devices("dot_general", detail::mesh_of(l), detail::mesh_of(r));
  return DotNode<decltype(l), decltype(r), Preferred>{
      {l, r}, {dims, detail::dot_shape(l.shape(), r.shape(), dims, detail::errors_of(l, r))}};
}
// dot_general(a, b, dims, preferred_element_type<float>)
template <class A, class B, Element P>
  requires(Operand<A> && Operand<B> && !std::is_arithmetic_v<std::remove_cvref_t<A>> &&
           !std::is_arithmetic_v<std::remove_cvref_t<B>>)
constexpr auto dot_general(A const& a, B const& b, DotDims const& dims, PreferredElementType<P>) {
  static_assert(FloatingElement<P>, "tessel: preferred_element_type of a dot_general is a float type");
  return dot_general<A, B, P>(a, b, dims);
}

namespace detail {
// jnp.matmul's dimension numbers for these shapes (1-D operands promoted and squeezed, leading
// batch dimensions broadcast). Fails naming both shapes when jnp.matmul refuses them, and when
// jnp.matmul's result would need its operands squeezed or its result transposed (leading
// dimensions on one side only, or a size-1 batch dimension broadcast), which tessel does not do yet.
constexpr DotDims matmul_dims(Shape const& a, Shape const& b, StaticErrors* errors = nullptr) {
  auto const ra = a.size(), rb = b.size();
  DotDims dims;
  if (ra == 0 || rb == 0) {
    Message m;
    m << "matmul: operands must have rank at least 1, got shapes " << a << " and " << b << " (use multiply for scalars)";
    check_failed(m, errors);
    return dims;
  }
  auto u8 = [](std::size_t d) { return static_cast<std::uint8_t>(d); };
  // dot_shape checks the contracted sizes.
  std::size_t const bk = rb == 1 ? 0 : rb - 2;
  dims.lhs_contract.push_back(u8(ra - 1));
  dims.rhs_contract.push_back(u8(bk));
  if (ra == 1 || rb <= 2) return dims;  // b's leading dimensions or a's stack are free dimensions
  // Both have batch dimensions (a's and b's dimensions before the last two, aligned at the right).
  std::size_t const na = ra - 2, nb = rb - 2, n = na > nb ? na : nb;
  bool broadcasts = na != nb;
  for (std::size_t i = 0; i < n; ++i) {
    if (i < n - na || i < n - nb) continue;
    std::int64_t da = a[i - (n - na)], db = b[i - (n - nb)];
    if (da != db && da != 1 && db != 1) {
      Message m;
      m << "matmul: batch dimensions of shapes " << a << " and " << b << " do not broadcast: sizes " << da << " and " << db;
      check_failed(m, errors);
      return dims;
    }
    broadcasts = broadcasts || da != db;
  }
  if (broadcasts) {
    Message m;
    m << "matmul of shapes " << a << " and " << b
      << " broadcasts batch dimensions (jnp.matmul squeezes and transposes for that); tessel supports a 1-D operand, a "
         "2-D right operand, or equal batch dimensions: reshape or broadcast the operands first, or use dot_general";
    check_failed(m, errors);
    return dims;
  }
  for (std::size_t d = 0; d < na; ++d) {
    dims.lhs_batch.push_back(u8(d));
    dims.rhs_batch.push_back(u8(d));
  }
  return dims;
}
}  // namespace detail

// jnp.matmul: contracts a's last dimension with b's second-to-last (b's only one when 1-D).
// Supported: either operand 1-D; b 2-D (a's leading dimensions are a stack of matrices); equal
// ranks with equal batch dimensions. Other broadcasts are refused with a message.
template <class A, class B>
constexpr auto matmul(A const& a, B const& b) {
  return dot_general(a, b, detail::matmul_dims(as_node(a).shape(), as_node(b).shape(), detail::errors_of(as_node(a), as_node(b))));
}
// jnp.matmul(a, b, preferred_element_type=P)
template <class A, class B, Element P>
constexpr auto matmul(A const& a, B const& b, PreferredElementType<P> p) {
  return dot_general(a, b, detail::matmul_dims(as_node(a).shape(), as_node(b).shape(), detail::errors_of(as_node(a), as_node(b))),
                     p);
}

}  // namespace tessel
