// Graph capture's state on the host thread (runtime/capture.hpp); the backends record and launch.
#include "tessel/runtime/capture.hpp"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "tessel/core/error.hpp"
#include "tessel/runtime/distributed.hpp"
#include "tessel/runtime/stream.hpp"
#include "env_switch.hpp"

namespace tessel::detail {
namespace {

// TESSEL_GRAPHS=0: no graphs anywhere (a GPU replays step by step), to tell a graph's fault from a step's.
std::atomic<bool>& graphs_on() {
  static std::atomic<bool> on{[] {
    char const* env = std::getenv("TESSEL_GRAPHS");
    return env == nullptr || std::strcmp(env, "0") != 0;
  }()};
  return on;
}

std::atomic<bool>& host_graphs_asked() {
  static std::atomic<bool> asked{switched_on("TESSEL_HOST_GRAPHS")};
  return asked;
}

std::atomic<std::uint32_t> captures_begun{0};

struct Capture {
  std::uint32_t number = 0;  // 0: none under way
  std::string broken;
};
thread_local Capture current;

}  // namespace

std::string_view graphs_unavailable() {
  if (!graphs_on().load(std::memory_order_relaxed)) return "graphs are off (TESSEL_GRAPHS=0, or use_graphs(false))";
  // A message between processes is sent once its buffer is complete, which the host must see.
  if (distributed::process_count() > 1) return "collectives between processes wait on the host (MPI)";
  return backend::graphs_unavailable(host_graphs_asked().load(std::memory_order_relaxed));
}

void use_host_graphs_for_test(bool on) { host_graphs_asked().store(on, std::memory_order_relaxed); }

std::uint32_t capture_number() noexcept { return current.number; }

void begin_capture(std::span<int const> devices) {
  if (current.number != 0) throw Error("begin_capture: this thread is capturing already");
  fence_devices(devices);  // (events from before the capture are complete, so it needs none of them)
  std::uint32_t number = captures_begun.fetch_add(1, std::memory_order_relaxed) + 1;
  if (number == 0) number = captures_begun.fetch_add(1, std::memory_order_relaxed) + 1;  // (0 is "none")
  backend::begin_graph_capture(devices, number);
  current = Capture{number, {}};
}

CapturedGraph end_capture() {
  CapturedGraph graph;
  graph.kept = buffers_released_in_capture();
  std::string why = std::move(current.broken);
  current = Capture{};
  graph.native = backend::end_graph_capture(why);
  if (!graph.native && why.empty()) why = "the backend made no graph";
  graph.broken = std::move(why);  // (a backend given a reason returns no graph)
  return graph;
}

void break_capture(std::string const& why) {
  if (current.number != 0 && current.broken.empty()) current.broken = why;
}

std::string host_wait_in_capture(std::span<int const> devices) {
  std::string which;
  for (int id : devices) which += (which.empty() ? "" : ", ") + std::to_string(id);
  return "a host wait for device" + std::string(devices.size() == 1 ? " " : "s ") + which +
         " inside a step (it reads device memory on the host, or sends it between processes)";
}

bool capture_broken() noexcept { return current.number != 0 && !current.broken.empty(); }

void launch_graph(CapturedGraph const& graph) {
  if (!graph.native) throw Error("launch_graph: the capture made no graph (" + graph.broken + ")");
  count(ordering_counts().graph_launches);
  backend::launch_graph(graph.native.get());
}

}  // namespace tessel::detail

namespace tessel {

void use_graphs(bool on) { detail::graphs_on().store(on, std::memory_order_relaxed); }

}  // namespace tessel
