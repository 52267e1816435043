// CUDA: the ordering primitives of runtime/stream.hpp on the devices' streams. A launch is
// asynchronous by itself, an event is a cudaEvent recorded on the device's stream, a wait is
// cudaStreamWaitEvent (the host does not wait), a fence synchronizes one stream.
#include <cuda_runtime.h>

#include <format>

#include "tessel/core/error.hpp"
#include "tessel/runtime/stream.hpp"

namespace tessel::detail {
namespace {

void check(cudaError_t status, char const* what) {
  if (status != cudaSuccess)
    throw Error(std::format("{} failed: {} ({})", what, cudaGetErrorName(status), cudaGetErrorString(status)));
}

}  // namespace

bool host_queues_active() noexcept { return false; }
bool work_is_asynchronous() noexcept { return true; }
void submit(Device const& d, char const* label, std::function<void(ExecSpace const&, char const*)> work) {
  work(d.exec, label);
}
void stop_host_queues() {}

Event record_event(Device const& d) {
  count(ordering_counts().events);
  // An event belongs to the GPU of the stream it is recorded on.
  check(cudaSetDevice(d.exec.cuda_device()), "cudaSetDevice");
  cudaEvent_t e = nullptr;
  check(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  check(cudaEventRecord(e, d.exec.cuda_stream()), "cudaEventRecord");
  return Event{d.id, 0, std::shared_ptr<void>(e, [](void* p) { (void)cudaEventDestroy(static_cast<cudaEvent_t>(p)); })};
}

void wait_event(Device const& waiter, Event const& e) {
  if (e.device < 0 || e.device == waiter.id || !e.native) return;
  count(ordering_counts().waits);
  check(cudaStreamWaitEvent(waiter.exec.cuda_stream(), static_cast<cudaEvent_t>(e.native.get()), 0),
        "cudaStreamWaitEvent");
}

void fence_devices(std::span<int const> ids) {
  count(ordering_counts().device_fences);
  for (int id : ids) device(id).exec.fence("tessel::fence_device");
}

void fence_device(Device const& d) {
  count(ordering_counts().device_fences);
  d.exec.fence("tessel::fence_device");
}

}  // namespace tessel::detail
