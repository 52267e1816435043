#pragma once
// jax.lax.with_sharding_constraint: the value of `x` must have `sharding`; the planner computes it
// that way (resharding the inputs it reads) or reshards it after.
#include "tessel/expr/checks.hpp"
#include "tessel/expr/node.hpp"

namespace tessel {

template <class X>
  requires(Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>)
auto with_sharding_constraint(X const& x, NamedSharding const& sharding) {
  auto n = as_node(x);
  detail::check_same_devices("with_sharding_constraint", detail::mesh_of(n), &sharding.mesh());
  sharding.check_shape(n.shape());
  return ConstraintNode<decltype(n)>{{n}, {sharding, n.shape()}};
}

}  // namespace tessel
