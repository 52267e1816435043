#include <iostream>
#include "tessel/tessel.hpp"
using namespace tessel;
int main(int argc, char* argv[]) {
  ScopeGuard guard(argc, argv);
  set_device_count(8);                                      // 8 logical devices on this host
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});              // jax.make_mesh((4, 2), ('dp', 'mp'))
  auto z = device_put(random::normal(PRNGKey(1), {1024, 256}), NamedSharding(mesh, P("dp", "mp")));
  auto total = sum(exp(z) * 2.0f, 1);                       // captured, not run
  std::cout << explain(total);                              // the plan that will run
  Tensor<float> s = total;                                  // runs it
}
