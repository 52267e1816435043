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

// The mesh of an expression's committed tensors (nullptr when it has none): a tensor's or a
// constraint's own, otherwise the first child's that has one. One instantiation level per
// nesting level (node.hpp, arity).
template <class E>
Mesh const* mesh_of(E const& e) {
  if constexpr (E::kind == NodeKind::tensor) {
    Mesh const& m = e.data.tensor.sharding().mesh();
    return m.num_devices() > 1 ? &m : nullptr;
  } else if constexpr (E::kind == NodeKind::constraint) {
    return &e.data.sharding.mesh();
  } else if constexpr (arity<E> <= 3) {
    Mesh const* found = nullptr;
    if constexpr (arity<E> > 0) found = mesh_of(std::get<0>(e.children));
    if constexpr (arity<E> > 1) found = found ? found : mesh_of(std::get<1>(e.children));
    if constexpr (arity<E> > 2) found = found ? found : mesh_of(std::get<2>(e.children));
    return found;
  } else {
    Mesh const* found = nullptr;
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      ((found = found ? found : mesh_of(std::get<I>(e.children))), ...);
    }(std::make_index_sequence<arity<E>>{});
    return found;
  }
}

}  // namespace tessel::detail
