// Programs that go wrong on one process, for the fault tests (expect_failure.cmake runs them under
// mpirun and checks that the job ends in bounded time, non-zero, saying why):
//   throw  - process 1 throws (a bad input file, say) while the others go on to a collective;
//   hang   - process 1 stops answering while the others wait in a collective (the first run of a
//            plan: they wait in its plan agreement);
//   hang_later - the same once the plan is cached: they wait inside the all-reduce itself;
//   hang_gather - the same in a reshard's all-gather (MPI's own, a blocking call);
//   ok     - every process runs the same program (the control).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "tessel/tessel.hpp"

int main(int argc, char* argv[]) {
  using namespace tessel;
  char const* mode = argc > 1 ? argv[1] : "ok";
  ScopeGuard guard;
  auto mesh = make_mesh({device_count()}, {"x"});
  Shape shape{static_cast<std::int64_t>(device_count()), 4};
  auto x = device_put(std::vector<float>(static_cast<std::size_t>(shape.num_elements()), 1.0f), shape,
                      NamedSharding(mesh, P("x")));
  if (std::strcmp(mode, "hang_later") == 0) Tensor<float> first = sum(x, {0});  // plans and agrees
  if (std::strcmp(mode, "hang_gather") == 0) {
    NamedSharding replicated(mesh, P());
    auto whole = device_put(x, replicated);  // row blocks gathered: MPI_Allgather
    if (distributed::process_index() == 1) std::this_thread::sleep_for(std::chrono::hours(1));
    whole = device_put(x, replicated);
  }
  if (distributed::process_index() == 1) {
    if (std::strcmp(mode, "throw") == 0) throw std::runtime_error("cannot read weights.bin on this host");
    if (std::strncmp(mode, "hang", 4) == 0) std::this_thread::sleep_for(std::chrono::hours(1));
  }
  Tensor<float> y = sum(x, {0});
  auto total = process_allgather(y);
  if (distributed::process_index() == 0) std::printf("sum: %g\n", static_cast<double>(total[0]));
  return 0;
}
