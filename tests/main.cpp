// One main for every test binary: Kokkos and tessel's devices live for the whole run, and the
// process has 8 logical devices, as on the machines the tutorial describes (under mpirun, the
// devices TESSEL_NUM_DEVICES gives each process: 8 in all for the tests run that way).
#include <catch2/catch_session.hpp>

#include <cstdlib>

#include "tessel/tessel.hpp"

int main(int argc, char* argv[]) {
  // Plans must not depend on a cost model calibrated on this machine: keep the defaults.
  setenv("TESSEL_COST_MODEL", "", 1);
  tessel::ScopeGuard guard;
  if (tessel::distributed::process_count() == 1) tessel::set_device_count(8);
  return Catch::Session().run(argc, argv);
}
