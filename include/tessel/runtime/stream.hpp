#pragma once
// How device work is ordered, as GPU streams order it. Each logical device has a queue: its
// execution-space instance (a GPU stream), or on a host with TESSEL_ASYNC=1 a host thread that
// serves the device's work in issue order (backend/host/work_queues.cpp). Work on one device runs
// in issue order; work on two devices is ordered only by events: record one on a device's queue,
// make another device's queue wait for it. The host waits only for the devices whose memory it
// touches (fence_device; fence_all_devices where it touches every device's).
//
// The rule every step keeps (the executor's invariant): when a step returns, each device's queue
// is ordered after every write to the shards that device holds. So a step that reads its own
// device's shards needs no wait; one that reads another device's shards waits for that device
// first (wait_for); one that writes a shard another device holds (a replica sharing one buffer, a
// collective's one kernel for every member) makes that device wait for the writer after it.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <utility>

#include "tessel/runtime/device.hpp"

namespace tessel::detail {

// A point in one device's queue: complete once the work queued there before it is.
struct Event {
  int device = -1;               // -1: complete from the start
  std::uint64_t ticket = 0;      // host queues: the number of items queued on `device` before it
  std::shared_ptr<void> native;  // GPU backends: the backend's event
  std::uint32_t capture = 0;     // recorded inside this capture (runtime/capture.hpp), or 0
};

// What the runtime asked of the queues, counted on the host (bench_dispatch reports them per call):
// launches (kernels, copies, GEMMs, each on one device), events recorded, waits between devices,
// and host fences of some devices or of all.
struct OrderingCounts {
  std::atomic<std::uint64_t> launches{0};
  std::atomic<std::uint64_t> events{0};
  std::atomic<std::uint64_t> waits{0};
  std::atomic<std::uint64_t> device_fences{0};
  std::atomic<std::uint64_t> all_fences{0};
  std::atomic<std::uint64_t> graph_launches{0};  // captured graphs queued (runtime/capture.hpp)
};
OrderingCounts& ordering_counts() noexcept;
// A load and a store, not a read-modify-write: the host thread counts (a locked add per launch was
// most of a cached call's cost); two threads counting at once may lose a count.
inline void count(std::atomic<std::uint64_t>& c) noexcept {
  c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

// Whether this process's host queues run device work asynchronously (TESSEL_ASYNC=1 on a host
// backend); false on GPU backends, whose instances are asynchronous themselves.
bool host_queues_active() noexcept;
// Whether launches return before their work is done: host queues, or a GPU backend.
bool work_is_asynchronous() noexcept;
// Whether this thread is a host queue's (work running there runs inline: it is already ordered).
inline thread_local bool queue_thread = false;
inline bool on_queue_thread() noexcept { return queue_thread; }
// host_queues_active(), read once (it does not change while the process runs).
inline bool queues_on() noexcept {
  static bool const on = host_queues_active();
  return on;
}
// Queues `work` on device d's host queue (host_queues_active() only).
// The devices outlive their queued work: set_device_count and ScopeGuard's end stop the queues first.
void submit(Device const& d, char const* label, std::function<void(ExecSpace const&, char const*)> work);

// Runs `work(d.exec, label)`, which launches on the instance it is given, in d's order: now where
// launches are asynchronous by themselves (GPU streams) or synchronous (a host without queues),
// else on d's host queue (with a copy of the label, which may be gone by then). The work is
// copied: everything it reads must be captured by value (as device lambdas are). The instance is
// passed, not captured: copying one costs two atomic reference counts per launch.
template <class F>
void enqueue(Device const& d, char const* label, F&& work) {
  count(ordering_counts().launches);
  if (!queues_on() || on_queue_thread()) {
    std::forward<F>(work)(d.exec, label);
    return;
  }
  submit(d, label, std::function<void(ExecSpace const&, char const*)>(std::forward<F>(work)));
}

// An event after the work queued on d so far.
Event record_event(Device const& d);
// Later work on `waiter` starts after `e` is complete; the host does not wait.
void wait_event(Device const& waiter, Event const& e);
// The host waits for the work queued on d so far.
void fence_device(Device const& d);
// The host waits for the work queued on these devices (global ids of this process's devices).
void fence_devices(std::span<int const> ids);

// Ends the host queues' threads once their work is done (ScopeGuard's end).
void stop_host_queues();

// Every device of `waiters` waits for everything queued so far on every device of `on` (global
// ids of this process's devices; one event per device of `on`).
void wait_for_all(std::span<int const> waiters, std::span<int const> on);

// `waiter` waits for everything queued so far on `other` (nothing when they are one device).
inline void wait_for(Device const& waiter, Device const& other) {
  if (waiter.id != other.id) wait_event(waiter, record_event(other));
}

}  // namespace tessel::detail
