// A ScopeGuard with static storage duration (created before tessel's own singletons) ends cleanly
// at exit (fuzzer finding F2: it used the buffer pool after the pool's destruction). The check is
// the process exiting 0 under the sanitizers; its own binary, since the guard ends the runtime.
#include "tessel/tessel.hpp"

static tessel::ScopeGuard guard;

int main() {
  tessel::set_device_count(8);
  auto mesh = tessel::make_mesh({2, 4}, {"a", "b"});
  auto x = tessel::random::normal<float>(tessel::random::PRNGKey(0), tessel::Shape{64, 32},
                                         tessel::NamedSharding(mesh, tessel::P("a", "b")));
  { tessel::Tensor<float> pooled = x * 2.0f; }  // its memory stays in the pool until exit
  return tessel::Tensor<float>(tessel::sum(x * 0.0f)).to_host()[0] == 0.0f ? 0 : 1;
}
