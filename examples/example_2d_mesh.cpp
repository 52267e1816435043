// The tutorial's 2-D mesh: 8 devices as a 4x2 grid, data over 'dp', weights over 'mp', and a
// jitted forward(params, x) = x @ params. In JAX:
//   mesh = jax.make_mesh((4, 2), ('dp', 'mp'))
//   data_sharding = jax.NamedSharding(mesh, jax.P('dp', None))
//   weight_sharding = jax.NamedSharding(mesh, jax.P(None, 'mp'))
//   @jax.jit
//   def forward(params, x): return x @ params
#include <iostream>

#include "tessel/tessel.hpp"

int main(int argc, char* argv[]) {
  tessel::ScopeGuard guard(argc, argv);
  tessel::set_device_count(8);
  using tessel::None;
  using tessel::P;

  auto mesh = tessel::make_mesh({4, 2}, {"dp", "mp"});
  auto data_sharding = tessel::NamedSharding(mesh, P("dp", None));
  auto weight_sharding = tessel::NamedSharding(mesh, P(None, "mp"));

  auto x = tessel::random::normal(tessel::PRNGKey(0), {128, 4}, data_sharding);
  auto params = tessel::random::normal(tessel::PRNGKey(1), {4, 16}, weight_sharding);
  std::cout << "x: " << to_string(x.sharding()) << "\n";
  tessel::visualize_array_sharding(x);
  std::cout << "params: " << to_string(params.sharding()) << "\n";
  tessel::visualize_array_sharding(params);

  auto forward = tessel::jit([](auto const& params, auto const& x) { return x.matmul(params); });
  auto y = forward(params, x);
  std::cout << "\nforward(params, x) = x @ params: " << to_string(y.sharding()) << "\n";
  tessel::visualize_array_sharding(y);
  std::cout << "plan (rows stay on dp, columns on mp: no communication):\n" << tessel::explain(forward, params, x);
  return 0;
}
