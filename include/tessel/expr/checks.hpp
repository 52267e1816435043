#pragma once
// Checks made while an expression is built, so mistakes surface at the line that makes them.
#include <initializer_list>
#include <tuple>
#include <utility>

#include "tessel/core/mesh.hpp"
#include "tessel/core/shape.hpp"
#include "tessel/expr/node.hpp"

namespace tessel::detail {

// NumPy broadcasting of two shapes; fails naming both shapes and the dimension.
Shape broadcast_shapes(char const* op, Shape const& a, Shape const& b);
// Fails naming both meshes unless they hold the same devices (or one is a single device: such a
// tensor is uncommitted and moves to the other's devices, as in JAX).
void check_same_devices(char const* op, Mesh const* a, Mesh const* b);

// The mesh of an expression's committed tensors (nullptr when it has none).
template <class E>
Mesh const* mesh_of(E const& e) {
  if constexpr (E::kind == NodeKind::tensor) {
    Mesh const& m = e.tensor.sharding().mesh();
    return m.num_devices() > 1 ? &m : nullptr;
  } else if constexpr (E::kind == NodeKind::scalar) {
    return nullptr;
  } else if constexpr (E::kind == NodeKind::elementwise) {
    // One instantiation level per nesting level (node.hpp, arity).
    Mesh const* found = mesh_of(std::get<0>(e.children));
    if constexpr (arity<E> > 1) found = found ? found : mesh_of(std::get<1>(e.children));
    if constexpr (arity<E> > 2) found = found ? found : mesh_of(std::get<2>(e.children));
    return found;
  } else if constexpr (E::kind == NodeKind::concatenate) {
    Mesh const* found = nullptr;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((found = found ? found : mesh_of(std::get<I>(e.children))), ...);
    }(std::make_index_sequence<arity<E>>{});
    return found;
  } else if constexpr (E::kind == NodeKind::reduce || E::kind == NodeKind::view) {
    return mesh_of(e.child);
  } else if constexpr (E::kind == NodeKind::dot) {
    Mesh const* m = mesh_of(e.lhs);
    return m ? m : mesh_of(e.rhs);
  } else {
    return &e.sharding.mesh();
  }
}

}  // namespace tessel::detail
