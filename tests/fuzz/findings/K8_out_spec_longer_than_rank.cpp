// Reproducer of a fuzz finding (see README.md here for the build line and what it shows).
#include "tessel/tessel.hpp"
#include <cstdio>
using namespace tessel;
int main() {
  ScopeGuard g; set_device_count(8);
  Mesh mesh = make_mesh({8}, {"z"});
  std::vector<float> h(8, 1.0f);
  auto a = device_put(h, {8}, NamedSharding(mesh, P("z")));
  Tensor<float> ok = eval(relu(a), NamedSharding(mesh, P(None)));
  std::printf("P(None): %s\n", to_string(ok.sharding()).c_str());
  try {
    Tensor<float> r = eval(relu(a), NamedSharding(mesh, P(None, "z")));  // rank 1, spec of 2 entries
    std::printf("P(None, 'z') accepted: result %s\n", to_string(r.sharding()).c_str());
  } catch (Error const& e) { std::printf("refused: %s\n", e.what()); }
}
