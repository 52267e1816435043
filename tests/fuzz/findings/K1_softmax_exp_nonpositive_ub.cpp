// Reproducer of a fuzz finding (see README.md here for the build line and what it shows).
#include "tessel/tessel.hpp"
#include <cmath>
#include <cstdio>
using namespace tessel;
int main() {
  ScopeGuard g; set_device_count(8);
  auto x = device_put(std::vector<float>{INFINITY, NAN, 5.0f}, {3});
  Tensor<float> m = max(x);
  std::fprintf(stderr, "max([inf, nan, 5]) = %g (JAX: nan)\n", m.to_host()[0]);
  Tensor<float> s = softmax(x);   // exp_nonpositive(inf - 5): UB cast in math.hpp
  std::printf("softmax = %g %g %g\n", s.to_host()[0], s.to_host()[1], s.to_host()[2]);
}
