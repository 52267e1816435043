// Lazy expressions over sharded tensors, and what tessel plans for them. In JAX terms:
//   y = jnp.tanh(a * x + b) * 0.5 - x / 3      (one fused kernel per device, no communication)
//   p = jax.nn.softmax(x, axis=-1)             (rows fused: one pass per row, on each device)
//   s = jnp.sum(x, axis=1)                     (x's columns are split: a partial sum, then an all-reduce)
#include <iostream>

#include "tessel/tessel.hpp"

int main(int argc, char* argv[]) {
  tessel::ScopeGuard guard(argc, argv);
  tessel::set_device_count(8);
  using tessel::None;
  using tessel::P;

  auto mesh = tessel::make_mesh({8}, {"x"});
  tessel::NamedSharding rows(mesh, P("x", None));
  auto a = tessel::random::normal(tessel::PRNGKey(0), {1024, 256}, rows);
  auto x = tessel::random::normal(tessel::PRNGKey(1), {1024, 256}, rows);
  auto b = tessel::random::normal(tessel::PRNGKey(2), {1024, 256}, rows);

  auto chain = tanh(a * x + b) * 0.5f - x / 3.0f;  // nothing runs yet
  std::cout << "y = tanh(a * x + b) * 0.5 - x / 3 with a, x, b on " << to_string(rows) << "\n"
            << tessel::explain(chain) << "\n";
  tessel::Tensor<float> y = chain;  // runs here
  std::cout << "y[0, 0] = " << y.to_host()[0] << "\n\n";

  std::cout << "softmax(x, axis=-1)\n" << tessel::explain(tessel::softmax(x)) << "\n";

  auto grid = tessel::make_mesh({4, 2}, {"dp", "mp"});
  auto z = tessel::device_put(x, tessel::NamedSharding(grid, P("dp", "mp")));
  std::cout << "sum(z, axis=1) with z on " << to_string(z.sharding()) << "\n" << tessel::explain(tessel::sum(z, 1));
  std::cout << "the same, asking for the result on P(('dp', 'mp'))\n"
            << tessel::explain(tessel::sum(z, 1), tessel::NamedSharding(grid, P({"dp", "mp"}))) << "\n";

  auto replicated = tessel::device_put(b, tessel::NamedSharding(grid, P()));
  std::cout << "z + b with b replicated: b's local rows are sliced in place, no bytes move\n"
            << tessel::explain(z + replicated) << "\n";

  // Views read their operand in place inside a fused kernel; reshape keeps a sharding that
  // survives it without moving data; slicing a sharded dimension gathers it first.
  std::cout << "exp(transpose(z)) * 2 with z on " << to_string(z.sharding()) << "\n"
            << tessel::explain(exp(tessel::transpose(z)) * 2.0f);
  std::cout << "reshape(z, (4, 256, 256))\n" << tessel::explain(tessel::reshape(z, {4, 256, 256}));
  std::cout << "reshape(z, (1024, 16, 16))\n" << tessel::explain(tessel::reshape(z, {1024, 16, 16}));
  std::cout << "slice(z, (0, 0), (512, 256)): rows 0..511\n" << tessel::explain(tessel::slice(z, {0, 0}, {512, 256}));
  std::cout << "concatenate(1, z, z * 2)\n" << tessel::explain(tessel::concatenate(1, z, z * 2.0f));
  return 0;
}
