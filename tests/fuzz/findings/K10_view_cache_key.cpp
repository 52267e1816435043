// Reproducer of a fuzz finding (see README.md here for the build line and what it shows).
#include "tessel/tessel.hpp"
#include <cstdio>
using namespace tessel;
template <class T> void pr(char const* what, Tensor<T> const& t) {
  auto v = t.to_host();
  std::printf("%s: shape %s sharding %s values", what, to_string(t.shape()).c_str(), to_string(t.sharding().spec()).c_str());
  for (auto x : v) std::printf(" %g", x);
  std::printf("\n");
}
int main() {
  ScopeGuard g; set_device_count(8);
  std::vector<float> h(12);
  for (int i = 0; i < 12; ++i) h[i] = i;
  for (int order = 0; order < 2; ++order) {
    Mesh mesh = make_mesh({2}, {"x"}, {2 * order, 2 * order + 1});
    auto y = device_put(h, {2, 6}, NamedSharding(mesh, P("x")));
    auto s = [&] { return eval(slice(y, {1, 1}, {2, 3}) * 2.0f); };
    auto r = [&] { return eval(reshape(y, {1, 1, 2, 3, 1, 2}) * 2.0f); };
    try {
      if (order == 0) { pr("slice", s()); pr("reshape", r()); }
      else { pr("reshape", r()); pr("slice", s()); }
    } catch (std::exception const& e) { std::printf("exception: %s\n", e.what()); }
    std::printf("plans %zu\n", plan::cached_plans());
  }
}
