#pragma once
// jax.lax.with_sharding_constraint: the value of `x` must have `sharding`; the planner computes it
// that way (resharding the inputs it reads) or reshards it after.
#include "tessel/expr/checks.hpp"
#include "tessel/expr/node.hpp"

namespace tessel {

template <class X>
  requires(Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>)
constexpr auto with_sharding_constraint(X const& x, NamedSharding const& sharding) {
  auto n = as_node(x);
  detail::check_same_devices("with_sharding_constraint", detail::mesh_of(n), &sharding.mesh());
  if (auto* errors = detail::errors_of(n)) {
    Message m = ShardLayout::error(sharding.mesh().axes(), sharding.spec(), n.shape());
    if (!m.empty()) detail::check_failed(Message("with_sharding_constraint: ").append(m.view()), errors);
  } else {
    sharding.check_shape(n.shape());
  }
  return ConstraintNode<decltype(n)>{{n}, {sharding, n.shape()}};
}

// with_sharding_constraint(x, P(...)) over x's own mesh (JAX takes the mesh of the context; here
// the mesh x lives on, or a static_jit function's mesh): fails naming the spec when x is on no
// mesh of several devices, or when the spec does not fit the mesh or x's shape.
template <class X>
  requires(Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>)
constexpr auto with_sharding_constraint(X const& x, PartitionSpec const& spec) {
  auto n = as_node(x);
  Mesh const* mesh = detail::mesh_of(n);
  Message m;
  if (mesh == nullptr)
    m << "with_sharding_constraint: " << spec << " needs a mesh, and the operand of shape " << n.shape()
      << " is on a single device; pass a NamedSharding";
  else
    m = ShardLayout::error(mesh->axes(), spec, n.shape());
  if (!m.empty()) {
    auto* errors = detail::errors_of(n);
    detail::check_failed(errors ? Message("with_sharding_constraint: ").append(m.view()) : m, errors);
    return with_sharding_constraint(n, NamedSharding(mesh ? *mesh : Mesh::device_zero(), P()));
  }
  return with_sharding_constraint(n, NamedSharding(*mesh, spec));
}

}  // namespace tessel
