// The process model (runtime/distributed.hpp): which process this is, how many there are, and
// which devices each holds. Without MPI (or outside a launcher) it is one process. What carries the
// messages is the transport's (mpi/ or no_mpi/, world.hpp).
#include "tessel/runtime/distributed.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <format>
#include <string>
#include <vector>

#include "tessel/core/device_count.hpp"
#include "tessel/core/error.hpp"
#include "tessel/plan/cost_model.hpp"
#include "tessel/runtime/backend/devices.hpp"
#include "world.hpp"

namespace tessel::distributed {
namespace {

struct State {
  bool initialized = false;  // initialize() ran and agreed on the device counts
  bool started_mpi = false;  // initialize() started the transport (MPI_Init), so finalize() ends it
  int index = 0, count = 1;
};

State& state() {
  static State s;
  return s;
}

// An exception no one catches ends this process; the others would wait for it in their next
// exchange. Print it once, with the process, and end the whole job now.
[[noreturn]] void end_job_on_uncaught_exception() {
  std::string what = "an unknown exception";
  if (auto e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (std::exception const& x) {
      what = x.what();
    } catch (...) {
    }
  }
  std::fprintf(stderr, "tessel: process %d of %d ends the job: uncaught exception: %s\n", state().index,
               state().count, what.c_str());
  std::fflush(stderr);
  abort_job(2);
}

}  // namespace

bool launched_by_mpi() {
  for (char const* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (std::getenv(v) != nullptr) return true;
  return false;
}

void initialize() {
  State& s = state();
  if (s.initialized) return;
  TransportStart const started = start_transport();
  s.index = started.index;
  s.count = started.count;
  s.started_mpi = started.started;
  // Every process must hold the same number of devices: global ids are process * L + local id.
  int local = local_device_count();
  std::vector<unsigned long long> const counts = all_gather_word(static_cast<unsigned long long>(local));
  for (int p = 0; p < s.count; ++p)
    if (counts[static_cast<std::size_t>(p)] != counts[0]) {
      std::string list;
      for (int q = 0; q < s.count; ++q) list += std::format("{}process {}: {}", q ? ", " : "", q, counts[static_cast<std::size_t>(q)]);
      s.count = 1;
      s.index = 0;
      throw Error(std::format("tessel::distributed::initialize: every process needs the same number of devices "
                              "(TESSEL_NUM_DEVICES), but they have {}", list));
    }
  s.initialized = true;
  if (s.count > 1) {
    std::set_terminate(end_job_on_uncaught_exception);
    stages_through_host();  // a bad TESSEL_MPI_STAGING is reported at start-up, not at the first collective
    // The planner prices collectives whose groups cross processes with the cost model's mpi_
    // entries, so it may choose another plan than one process would (and a reduction in another
    // order); TESSEL_PRICE_PROCESSES=0 keeps every plan the one process's.
    char const* price = std::getenv("TESSEL_PRICE_PROCESSES");
    if (price == nullptr || std::string(price) != "0") plan::set_devices_per_process(local);
  }
}

bool stages_through_host() {
  static bool const staged = [] {
    char const* env = std::getenv("TESSEL_MPI_STAGING");
    std::string const v = env ? env : "";
    if (v.empty() || v == "auto") return !backend::mpi_reads_device_memory();
    if (v == "host") return true;
    if (v == "direct") return false;
    throw Error(std::format("TESSEL_MPI_STAGING='{}': it takes 'host' (device buffers cross processes through pinned "
                            "host memory), 'direct' (MPI reads device memory) or 'auto' (host when this MPI "
                            "cannot read device memory)",
                            v));
  }();
  return staged;
}

void finalize() {
  State& s = state();
  free_communicators();
  end_transport(s.started_mpi);
  s = State{};
  plan::set_devices_per_process(0);
}

bool is_initialized() { return state().initialized && state().count > 1; }
int process_index() { return state().index; }
int process_count() { return state().count; }

int process_of(int device_id) { return device_id / local_device_count(); }

std::vector<int> local_devices() {
  int local = local_device_count();
  std::vector<int> ids;
  for (int k = 0; k < local; ++k) ids.push_back(process_index() * local + k);
  return ids;
}

std::vector<int> devices() {
  std::vector<int> ids;
  for (int k = 0; k < device_count(); ++k) ids.push_back(k);
  return ids;
}

}  // namespace tessel::distributed
