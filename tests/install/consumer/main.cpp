// The smallest tessel program: 8 devices, a 2x4 mesh, a fused sharded expression and its sum
// (an all-reduce), checked against the host.
#include <tessel/tessel.hpp>

#include <cstdio>
#include <numeric>
#include <vector>

int main() {
  tessel::ScopeGuard guard;
  tessel::set_device_count(8);
  auto mesh = tessel::make_mesh({2, 4}, {"dp", "mp"});
  std::vector<float> host(64);
  std::iota(host.begin(), host.end(), 0.0f);
  auto x = tessel::device_put(host, {8, 8}, tessel::NamedSharding(mesh, tessel::P("dp", "mp")));
  tessel::Tensor<float> total = tessel::sum(x * 2.0f + 1.0f);
  float got = total.to_host()[0];
  std::printf("sum = %g (expected 4096)\n", got);
  return got == 4096.0f ? 0 : 1;
}
