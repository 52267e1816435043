// GPUs (CUDA and HIP, through gpu/vendor.hpp): runtime/capture.hpp's graphs, by stream capture.
// The first device's stream captures; the other devices' streams join it through events (a fork
// at the start, a join at the end), so that the graph holds every device's kernels, copies and
// BLAS calls with the waits between them. A launch goes on the first stream after the others
// joined it (the graph after each device's earlier work), and the others wait for it (their later
// work after the graph).
#include <algorithm>
#include <format>
#include <memory>
#include <vector>

#include "tessel/runtime/capture.hpp"
#include "tessel/runtime/device.hpp"

#include "vendor.hpp"

namespace tessel::backend {
namespace {

using vendor::check;

struct Stream {
  gpuStream_t stream;
  int gpu;
};

// The devices' streams, each once (logical devices on one GPU may share its stream), the first
// device's first.
std::vector<Stream> streams_of(std::span<int const> devices) {
  std::vector<Stream> streams;
  for (int id : devices) {
    ExecSpace const& exec = device(id).exec;
    gpuStream_t const s = vendor::stream_of(exec);
    if (std::none_of(streams.begin(), streams.end(), [s](Stream const& x) { return x.stream == s; }))
      streams.push_back({s, vendor::gpu_of(exec)});
  }
  return streams;
}

// An event of the GPU of the stream it will be recorded on.
gpuEvent_t event_for(Stream const& s) {
  check(gpuSetDevice(s.gpu), "SetDevice");
  gpuEvent_t e = nullptr;
  check(gpuEventCreateWithFlags(&e, gpuEventDisableTiming), "EventCreateWithFlags");
  return e;
}

// `waiter` waits for what is queued on `on` so far, through `e` (recorded there).
void join(Stream const& waiter, Stream const& on, gpuEvent_t e) {
  check(gpuEventRecord(e, on.stream), "EventRecord");
  check(gpuStreamWaitEvent(waiter.stream, e, 0), "StreamWaitEvent");
}

struct Graph {
  gpuGraph_t graph = nullptr;
  gpuGraphExec_t exec = nullptr;  // (destroyed while a launch runs: freed when it ends)
  std::vector<Stream> streams;    // the first launches it
  std::vector<gpuEvent_t> joins;  // one per other stream: it joins the first before a launch
  gpuEvent_t fork = nullptr;      // the others wait for the launch through it
  Graph() = default;
  Graph(Graph const&) = delete;
  Graph& operator=(Graph const&) = delete;
  ~Graph() {
    if (exec != nullptr) (void)gpuGraphExecDestroy(exec);
    if (graph != nullptr) (void)gpuGraphDestroy(graph);
    for (gpuEvent_t e : joins) (void)gpuEventDestroy(e);
    if (fork != nullptr) (void)gpuEventDestroy(fork);
  }
};

// The capture under way on this thread: its streams and the fork's events.
struct Capturing {
  std::vector<Stream> streams;
  std::vector<gpuEvent_t> events;
  void clear() {
    for (gpuEvent_t e : events) (void)gpuEventDestroy(e);
    events.clear();
    streams.clear();
  }
};
thread_local Capturing capturing;

}  // namespace

std::string_view graphs_unavailable(bool) { return {}; }

void begin_graph_capture(std::span<int const> devices, std::uint32_t) {
  capturing.clear();
  capturing.streams = streams_of(devices);
  if (capturing.streams.empty()) return;
  Stream const& first = capturing.streams.front();
  check(gpuSetDevice(first.gpu), "SetDevice");
  // Relaxed: the pool may allocate (cudaMalloc) while a capture is under way on this thread.
  check(gpuStreamBeginCapture(first.stream, gpuStreamCaptureModeRelaxed), "StreamBeginCapture");
  for (std::size_t k = 1; k < capturing.streams.size(); ++k) {
    capturing.events.push_back(event_for(first));
    join(capturing.streams[k], first, capturing.events.back());  // (the stream is captured from here)
  }
}

std::shared_ptr<void> end_graph_capture(std::string& why) {
  if (capturing.streams.empty()) {
    if (why.empty()) why = "no device to capture";
    return nullptr;
  }
  auto graph = std::make_shared<Graph>();
  graph->streams = capturing.streams;
  Stream const& first = graph->streams.front();
  gpuError_t status = gpuSuccess;
  for (std::size_t k = 1; k < graph->streams.size() && status == gpuSuccess; ++k) {
    capturing.events.push_back(event_for(graph->streams[k]));
    status = gpuEventRecord(capturing.events.back(), graph->streams[k].stream);
    if (status == gpuSuccess) status = gpuStreamWaitEvent(first.stream, capturing.events.back(), 0);
  }
  check(gpuSetDevice(first.gpu), "SetDevice");
  gpuError_t const ended = gpuStreamEndCapture(first.stream, &graph->graph);
  capturing.clear();
  if (status == gpuSuccess) status = ended;
  if (status != gpuSuccess && why.empty())
    why = std::format("{}StreamEndCapture failed: {} (a call inside a step that a graph cannot hold, such as one "
                      "that waits on the host)",
                      vendor::api_prefix, gpuGetErrorName(status));
  if (!why.empty()) return nullptr;
  check(gpuGraphInstantiateWithFlags(&graph->exec, graph->graph, 0), "GraphInstantiateWithFlags");
  for (std::size_t k = 1; k < graph->streams.size(); ++k) graph->joins.push_back(event_for(graph->streams[k]));
  graph->fork = event_for(first);
  return graph;
}

void launch_graph(void* native) {
  Graph& graph = *static_cast<Graph*>(native);
  Stream const& first = graph.streams.front();
  for (std::size_t k = 1; k < graph.streams.size(); ++k) join(first, graph.streams[k], graph.joins[k - 1]);
  check(gpuGraphLaunch(graph.exec, first.stream), "GraphLaunch");
  check(gpuEventRecord(graph.fork, first.stream), "EventRecord");
  for (std::size_t k = 1; k < graph.streams.size(); ++k)
    check(gpuStreamWaitEvent(graph.streams[k].stream, graph.fork, 0), "StreamWaitEvent");
}

}  // namespace tessel::backend
