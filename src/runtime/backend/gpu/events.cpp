// GPUs (CUDA and HIP, through gpu/vendor.hpp): the ordering primitives of runtime/stream.hpp on
// the devices' streams. A launch is asynchronous by itself, an event is a GPU event recorded on the
// device's stream, a wait is a stream's wait on it (the host does not wait), a fence synchronizes
// one stream.
#include <format>

#include "tessel/runtime/capture.hpp"
#include "tessel/runtime/stream.hpp"

#include "vendor.hpp"

namespace tessel::detail {
namespace {

namespace vendor = backend::vendor;
using vendor::check;

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
  check(gpuSetDevice(vendor::gpu_of(d.exec)), "SetDevice");
  gpuEvent_t e = nullptr;
  check(gpuEventCreateWithFlags(&e, gpuEventDisableTiming), "EventCreateWithFlags");
  check(gpuEventRecord(e, vendor::stream_of(d.exec)), "EventRecord");
  return Event{d.id, 0, std::shared_ptr<void>(e, [](void* p) { (void)gpuEventDestroy(static_cast<gpuEvent_t>(p)); }),
               capture_number()};
}

void wait_event(Device const& waiter, Event const& e) {
  if (e.device < 0 || e.device == waiter.id || !e.native) return;
  // (inside a capture, an event from before it is complete: begin_capture fenced its devices)
  if (capture_number() != 0 && e.capture != capture_number()) return;
  count(ordering_counts().waits);
  check(gpuStreamWaitEvent(vendor::stream_of(waiter.exec), static_cast<gpuEvent_t>(e.native.get()), 0),
        "StreamWaitEvent");
}

void fence_devices(std::span<int const> ids) {
  if (capture_number() != 0) return break_capture(host_wait_in_capture(ids));
  count(ordering_counts().device_fences);
  for (int id : ids) device(id).exec.fence("tessel::fence_device");
}

void fence_device(Device const& d) {
  if (capture_number() != 0) return break_capture(host_wait_in_capture(std::span<int const>(&d.id, 1)));
  count(ordering_counts().device_fences);
  d.exec.fence("tessel::fence_device");
}

}  // namespace tessel::detail
