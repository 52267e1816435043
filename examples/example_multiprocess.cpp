// One program, many processes: run it under mpirun (./tessel mpirun -np 2 example_multiprocess).
// Every process runs this same code on its own devices (TESSEL_NUM_DEVICES each, 8 in all); the
// mesh spans the processes, each tensor holds only this process's shards, and the plans'
// collectives cross processes over MPI. Run alone, it is one process with all 8 devices.
#include <iostream>
#include <sstream>

#include "tessel/tessel.hpp"

int main(int argc, char* argv[]) {
  tessel::ScopeGuard guard(argc, argv);  // under mpirun: MPI first, then Kokkos
  using tessel::None;
  using tessel::P;
  namespace dist = tessel::distributed;
  int const me = dist::process_index();
  if (tessel::device_count() != 8) {
    if (me == 0)
      std::cerr << "example_multiprocess wants 8 devices in all; set TESSEL_NUM_DEVICES to 8 / (the process count)\n";
    return 1;
  }

  auto mesh = tessel::make_mesh({4, 2}, {"dp", "mp"});
  tessel::NamedSharding xs(mesh, P("dp", None)), w1s(mesh, P(None, "mp")), w2s(mesh, P("mp", None));
  auto x = tessel::random::normal(tessel::PRNGKey(0), {256, 64}, xs);
  auto w1 = tessel::random::normal(tessel::PRNGKey(1), {64, 256}, w1s);
  auto w2 = tessel::random::normal(tessel::PRNGKey(2), {256, 64}, w2s);

  std::ostringstream mine;
  mine << "process " << me << " of " << dist::process_count() << ": devices";
  for (int id : dist::local_devices()) mine << ' ' << id;
  mine << "; shards of W1 here:";
  for (auto const& s : w1.addressable_shards()) mine << " device " << s.device << " " << to_string(s.index);
  std::cout << mine.str() << "\n";

  auto block = [](auto const& x, auto const& w1, auto const& w2) { return tessel::matmul(relu(x.matmul(w1)), w2); };
  auto mlp = tessel::jit(block);
  auto y = mlp(x, w1, w2);
  auto whole = tessel::process_allgather(y);  // to_host would fail: y is not fully addressable here
  if (me == 0)
    std::cout << "\ny = relu(x @ W1) @ W2: " << to_string(y.sharding()) << ", y[0][0] = " << whole[0]
              << "\nfully addressable on process 0: " << (y.is_fully_addressable() ? "yes" : "no") << "\n"
              << tessel::explain(mlp, x, w1, w2);
  return 0;
}
