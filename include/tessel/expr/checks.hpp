#pragma once
// Checks made while an expression is built, so mistakes surface at the line that makes them. They
// are constexpr: static_jit (plan/static_plan.hpp) builds a function's expression in a constant
// expression, where a failed check's message is kept (StaticErrors) for a static_assert that
// prints it, instead of a throw (a compile error that could not say which check failed).
#include <initializer_list>
#include <tuple>
#include <utility>

#include "tessel/core/mesh.hpp"
#include "tessel/core/message.hpp"
#include "tessel/core/shape.hpp"
#include "tessel/expr/node.hpp"

namespace tessel::detail {

// NumPy broadcasting of two shapes; fails naming both shapes and the dimension (into `errors`
// while static_jit builds an expression, else as tessel::Error).
constexpr Shape broadcast_shapes(char const* op, Shape const& a, Shape const& b, StaticErrors* errors = nullptr) {
  std::size_t rank = a.size() > b.size() ? a.size() : b.size();
  Shape out(rank, 0);
  for (std::size_t i = 0; i < rank; ++i) {
    // Align from the right, as NumPy does.
    std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      Message m;
      m << op << ": shapes " << a << " and " << b << " do not broadcast: dimension " << i
        << " of the result would need sizes " << da << " and " << db << " to match (or one of them to be 1)";
      check_failed(m, errors);
      return a;
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

[[noreturn]] void throw_different_meshes(char const* op, Mesh const& a, Mesh const& b);
// Fails naming both meshes unless they hold the same devices (or one is a single device: such a
// tensor is uncommitted and moves to the other's devices, as in JAX).
constexpr void check_same_devices(char const* op, Mesh const* a, Mesh const* b) {
  if (a == nullptr || b == nullptr || a == b) return;
  if (!same_devices(*a, *b)) throw_different_meshes(op, *a, *b);
}

// The mesh of an expression's committed tensors (nullptr when it has none): a tensor's or a
// constraint's own, otherwise the first child's that has one. One instantiation level per
// nesting level (node.hpp, arity).
template <class E>
constexpr Mesh const* mesh_of(E const& e) {
  if constexpr (E::kind == NodeKind::tensor) {
    Mesh const& m = leaf_sharding(e.data).mesh();
    return m.num_devices() > 1 ? &m : nullptr;
  } else if constexpr (E::kind == NodeKind::constraint) {
    return &e.data.sharding.mesh();
  } else {
    Mesh const* found = nullptr;
#define TESSEL_STEP(K) (found = found ? found : mesh_of(std::get<K>(e.children)))
    TESSEL_FOR_EACH_CHILD(E, TESSEL_STEP)
#undef TESSEL_STEP
    return found;
  }
}

// `axis` (negative counts from the end) as a dimension of `shape`; fails naming it ("axis" or
// "dimension", as the op calls it), the op and the shape (src/expr/checks.cpp).
std::uint8_t one_axis(char const* op, char const* what, Shape const& shape, int axis);

}  // namespace tessel::detail
