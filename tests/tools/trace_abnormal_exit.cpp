// A traced program that does not end normally (run by tests/tools/check_trace.cmake with
// TESSEL_TRACE set): "throw" leaves an exception uncaught (the terminate handler completes the
// file), "kill" is killed outright (the file keeps every finished step, without its closing ']').
#include <csignal>
#include <cstdio>
#include <stdexcept>
#include <string_view>

#include "tessel/tessel.hpp"
#include "tessel/tools/trace.hpp"

int main(int argc, char* argv[]) {
  std::string_view mode = argc > 1 ? argv[1] : "";
  tessel::ScopeGuard guard;
  tessel::set_device_count(8);
  auto mesh = tessel::make_mesh({4, 2}, {"dp", "mp"});
  auto x = tessel::random::normal(tessel::PRNGKey(0), {16, 8}, tessel::NamedSharding(mesh, tessel::P("dp", "mp")));
  auto y = tessel::eval(tessel::sum(exp(x), 1));  // a kernel and an all-reduce: 16 events
  std::printf("traced to %s\n", tessel::trace_path().value_or("(nothing)").c_str());
  std::fflush(stdout);
  if (mode == "throw") throw std::runtime_error("the program fails after its traced call");
  if (mode == "kill") std::raise(SIGKILL);
  return 0;
}
