// A Megatron-style MLP block, relu(x @ W1) @ W2, with x over 'dp', W1 split by columns and W2 by
// rows over 'mp'. The first matmul needs no communication; the second contracts the 'mp'-split
// hidden dimension, so its partial sums meet in one all-reduce over 'mp' (or one reduce-scatter
// when the output is asked for sharded), and no weight is ever gathered.
#include <iostream>

#include "tessel/tessel.hpp"

int main(int argc, char* argv[]) {
  tessel::ScopeGuard guard(argc, argv);
  tessel::set_device_count(8);
  using tessel::None;
  using tessel::P;

  auto mesh = tessel::make_mesh({4, 2}, {"dp", "mp"});
  tessel::NamedSharding xs(mesh, P("dp", None)), w1s(mesh, P(None, "mp")), w2s(mesh, P("mp", None));
  auto x = tessel::random::normal(tessel::PRNGKey(0), {256, 64}, xs);
  auto w1 = tessel::random::normal(tessel::PRNGKey(1), {64, 256}, w1s);
  auto w2 = tessel::random::normal(tessel::PRNGKey(2), {256, 64}, w2s);
  std::cout << "x:  " << to_string(xs) << "\nW1: " << to_string(w1s) << "\nW2: " << to_string(w2s) << "\n\n";

  auto block = [](auto const& x, auto const& w1, auto const& w2) { return tessel::matmul(relu(x.matmul(w1)), w2); };
  auto mlp = tessel::jit(block);
  auto y = mlp(x, w1, w2);
  std::cout << "y = relu(x @ W1) @ W2: " << to_string(y.sharding()) << "\n" << tessel::explain(mlp, x, w1, w2) << "\n";

  auto mlp_scattered = tessel::jit(block, {xs, w1s, w2s}, tessel::NamedSharding(mesh, P("dp", "mp")));
  auto z = mlp_scattered(x, w1, w2);
  std::cout << "with out_shardings=P('dp', 'mp'): " << to_string(z.sharding()) << "\n"
            << tessel::explain(mlp_scattered, x, w1, w2);
  return 0;
}
