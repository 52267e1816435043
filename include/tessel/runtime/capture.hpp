#pragma once
// Recording device work as a graph that one launch replays: what CUDA and HIP graphs do with stream
// capture (a replayed kernel costs about 1.3 us against 4-10 us for a Kokkos launch). A recorded
// program (runtime/program.hpp) is captured once and replayed (runtime/program_graph.hpp).
//
// While this thread captures, the work it queues (kernels, copies, GEMMs, events, waits between
// devices) is recorded, not run. So nothing inside may wait on the host: a fence breaks the capture,
// which then ends with no graph and says why (the program runs step by step instead). Events from
// before the capture are not waited on inside it (a graph cannot hold them): begin_capture fences its
// devices first, so that they are complete. Buffers released inside the capture are taken again by
// the capture's later work, as the pool would (stream-ordered: the waits become the graph's
// edges), and kept by the graph until it goes, not returned to the pool (its replays use them).
//
// Backends: a GPU captures its devices' streams (forked from the first device's, joined back at the
// end); a host with TESSEL_ASYNC=1 records its queues' items and queues them again on a launch, so
// that the tests see what a graph holds and when it must be rebuilt. Graphs are used on a host only
// when TESSEL_HOST_GRAPHS=1 (or a test asks): there the replay of a program is not faster.
// TESSEL_GRAPHS=0, or use_graphs(false), turns graphs off everywhere.
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::detail {

// Whether this process captures graphs now: empty when it does, else why not.
std::string_view graphs_unavailable();
// Turns host graphs on or off for the tests (as TESSEL_HOST_GRAPHS=1 does; only with TESSEL_ASYNC=1).
void use_host_graphs_for_test(bool on);

// The number of the capture under way on this thread (events recorded inside it carry it), or 0.
std::uint32_t capture_number() noexcept;

// A captured graph: the backend's (null when the capture broke) and the buffers its replays write.
// The graph goes first, then the buffers (to the pool, which orders their next users after the
// graph's replays queued so far).
struct CapturedGraph {
  std::vector<std::shared_ptr<void>> kept;
  std::shared_ptr<void> native;
  std::string broken;  // why there is no graph
};

// Starts capturing what this thread queues on these devices (global ids of this process's
// devices), after the host waited for the work queued there so far.
void begin_capture(std::span<int const> devices);
// Ends the capture begun on this thread: the graph, or none and why.
CapturedGraph end_capture();
// The buffers released inside the capture that ends now on this thread, each back to the pool when
// its last holder drops it (end_capture puts them in the graph; defined by the pool, buffer_pool.cpp).
std::vector<std::shared_ptr<void>> buffers_released_in_capture();
// Inside a capture, something a graph cannot hold (a host wait): the capture ends with no graph.
void break_capture(std::string const& why);
// What breaks a capture when the host waits for these devices (a fence inside a step).
std::string host_wait_in_capture(std::span<int const> devices);
// Whether this thread captures and the capture is broken: later work need not be recorded.
bool capture_broken() noexcept;

// Queues a graph's work: on each of its devices after the work queued there before, and before
// the work queued there after (a launch on the host thread returns before it runs).
void launch_graph(CapturedGraph const& graph);

}  // namespace tessel::detail

namespace tessel {

// Whether a recorded program's replays may run as captured graphs where the backend captures them
// (the default; TESSEL_GRAPHS=0 starts with false): to compare a step-by-step replay with a graph's
// in one process, or to tell a graph's fault from a step's.
void use_graphs(bool on);

}  // namespace tessel

namespace tessel::backend {

// What each backend's folder defines for runtime/capture.hpp. Empty when it can capture now, else why not.
std::string_view graphs_unavailable(bool host_graphs_asked);
// Begins capturing the streams (or queues) of these devices; `number` marks the capture's events.
void begin_graph_capture(std::span<int const> devices, std::uint32_t number);
// Ends it: the backend's graph, or null with `why` set (`why` non-empty on entry: the capture broke
// earlier, and the backend ends it and returns null).
std::shared_ptr<void> end_graph_capture(std::string& why);
// Queues the graph's work (runtime/capture.hpp's launch_graph).
void launch_graph(void* native);

}  // namespace tessel::backend
