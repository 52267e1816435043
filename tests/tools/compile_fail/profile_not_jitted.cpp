// tessel::profile of a plain function: a compile error that says to pass tessel::jit(f).
#include "tessel/tessel.hpp"
#include "tessel/tools/profile.hpp"

void profile_a_lambda(tessel::Tensor<float> const& x) {
  auto f = [](auto const& v) { return v + 1.0f; };
  (void)tessel::profile(f, x);
}
