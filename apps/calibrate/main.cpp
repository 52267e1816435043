// tessel_calibrate: measures this machine's collectives once, prints the fitted cost model and
// the points it came from, and writes it where plan::cost_model() looks (plan/cost_model.hpp).
//   tessel_calibrate [--quick] [--dry-run] [--output PATH]
// Under mpirun (./tessel calibrate -np N) it also measures the collectives across processes (the
// model's mpi_ entries); process 0 prints and writes, and entries it did not measure (the
// in-process ones, with one device per process) keep the values in force.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>

#include "tessel/runtime/calibrate.hpp"
#include "tessel/tessel.hpp"

int main(int argc, char* argv[]) {
  tessel::ScopeGuard guard(argc, argv);
  tessel::CalibrationOptions options;
  std::optional<std::string> path = tessel::plan::cost_model_path();
  bool write = true;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--quick") {
      options.sizes = {std::size_t{4} << 10, std::size_t{64} << 10, std::size_t{1} << 20, std::size_t{8} << 20};
      options.repeats = 3;
    } else if (arg == "--dry-run") {
      write = false;
    } else if (arg == "--output" && i + 1 < argc) {
      path = argv[++i];
    } else {
      std::cerr << "usage: tessel_calibrate [--quick] [--dry-run] [--output PATH]\n"
                   "  measures the in-process collectives on TESSEL_NUM_DEVICES devices (under mpirun, also those\n"
                   "  across processes) and writes the cost model\n"
                   "  to PATH (default: $TESSEL_COST_MODEL, $XDG_CACHE_HOME/tessel/cost_model.txt or\n"
                   "  ~/.cache/tessel/cost_model.txt)\n";
      return arg == "--help" ? 0 : 2;
    }
  }
  try {
    auto c = tessel::calibrate(options);
    if (tessel::distributed::process_index() != 0) return 0;  // process 0 speaks for the job
    std::cout << tessel::to_string(c) << "\n" << tessel::plan::to_string(c.model);
    if (write) {
      if (!path) {
        std::cerr << "tessel_calibrate: no place to write the cost model (TESSEL_COST_MODEL is empty and no HOME); "
                     "pass --output PATH\n";
        return 1;
      }
      tessel::plan::write_cost_model(c.model, *path);
      std::cout << "written to " << *path << "\n";
    }
  } catch (tessel::Error const& e) {
    std::cerr << "tessel_calibrate: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
