// One main for every test binary: Kokkos and tessel's devices live for the whole run, and the
// process has 8 logical devices, as on the machines the tutorial describes.
#include <catch2/catch_session.hpp>

#include "tessel/tessel.hpp"

int main(int argc, char* argv[]) {
  tessel::ScopeGuard guard;
  tessel::set_device_count(8);
  return Catch::Session().run(argc, argv);
}
