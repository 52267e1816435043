// The sharding tutorial's first steps, in tessel. Each block mirrors the JAX lines above it.
#include <iostream>

#include "tessel/tessel.hpp"

int main(int argc, char* argv[]) {
  tessel::ScopeGuard guard(argc, argv);
  // XLA_FLAGS=--xla_force_host_platform_device_count=8
  tessel::set_device_count(8);
  using tessel::None;
  using tessel::P;

  // mesh = jax.make_mesh((len(devices),), ('data',))
  auto mesh = tessel::make_mesh({tessel::device_count()}, {"data"});
  // data_sharding = NamedSharding(mesh, P('data')); replicated = NamedSharding(mesh, P())
  auto data_sharding = tessel::NamedSharding(mesh, P("data"));
  auto replicated = tessel::NamedSharding(mesh, P());

  // X = jax.random.normal(jax.random.PRNGKey(0), (128, 4)); X_sharded = jax.device_put(X, data_sharding)
  auto X = tessel::random::normal(tessel::PRNGKey(0), {128, 4});
  auto X_sharded = tessel::device_put(X, data_sharding);

  // jax.debug.visualize_array_sharding(X_sharded)
  std::cout << "X_sharded: " << to_string(X_sharded.sharding()) << "\n";
  tessel::visualize_array_sharding(X_sharded);
  std::cout << "X replicated: " << to_string(replicated) << "\n";
  tessel::visualize_array_sharding(tessel::device_put(X, replicated));

  auto first = X_sharded.addressable_shards()[0];
  auto row0 = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), first.data);
  std::cout << "device " << first.device << " holds " << to_string(first.index) << "; X[0] = [" << row0(0) << ", "
            << row0(1) << ", " << row0(2) << ", " << row0(3) << "]\n\n";

  // mesh = jax.make_mesh((4, 2), ('dp', 'mp'))
  auto mesh2d = tessel::make_mesh({4, 2}, {"dp", "mp"});
  // data_sharding = jax.NamedSharding(mesh, jax.P('dp', None))
  auto dp_sharding = tessel::NamedSharding(mesh2d, P("dp", None));
  // weight_sharding = jax.NamedSharding(mesh, jax.P(None, 'mp'))
  auto mp_sharding = tessel::NamedSharding(mesh2d, P(None, "mp"));

  auto X_dp = tessel::device_put(X, dp_sharding);
  std::cout << "X on " << to_string(dp_sharding) << "\n";
  tessel::visualize_array_sharding(X_dp);
  auto W = tessel::device_put(tessel::random::normal(tessel::PRNGKey(1), {4, 8}), mp_sharding);
  std::cout << "W on " << to_string(mp_sharding) << "\n";
  tessel::visualize_array_sharding(W);
  return 0;
}
