// Reproducer of a fuzz finding (see README.md here for the build line and what it shows).
#include "tessel/tessel.hpp"
#include <cstdio>
#include <cmath>
using namespace tessel;
int main() {
  ScopeGuard g; set_device_count(8);
  Mesh mesh = make_mesh({2}, {"x"}, {0, 1});
  for (auto h : {std::vector<float>{-2, 2, 0.5, -0.f}, std::vector<float>{2, 2, 0.5, -0.f}, std::vector<float>{-2, 2, -0.f, 0.5}, std::vector<float>{-1, 1, 1, -0.f}}) {
    auto a = device_put(h, {4}, NamedSharding(mesh, P("x")));
    auto r = eval(prod(a, 0)).to_host();
    auto w = eval(prod(device_put(h, {4}), 0)).to_host();
    auto p0 = eval(prod(device_put(std::vector<float>{h[0], h[1]}, {2}), 0)).to_host();
    auto p1 = eval(prod(device_put(std::vector<float>{h[2], h[3]}, {2}), 0)).to_host();
    std::printf("[%g %g %g %g]: sharded %a single %a; halves %a %a\n", h[0], h[1], h[2], h[3], r[0], w[0], p0[0], p1[0]);
  }
}
