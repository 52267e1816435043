// Host backends: the ordering primitives of runtime/stream.hpp. Without TESSEL_ASYNC a launch has
// finished when it returns, so events are complete when recorded and a fence has nothing to wait
// for. With TESSEL_ASYNC=1 each logical device's work goes to a queue served by a host thread of
// its own, as a GPU stream serves it: a launch returns before its work runs, one device's work
// runs in issue order, and two devices' work interleaves as the threads find it, each item after
// a seeded random delay (TESSEL_ASYNC_SEED, TESSEL_ASYNC_DELAY_US), so that a missing event
// changes a value or trips a check instead of passing by luck. Two queues' items may run at the
// same time, as two streams' kernels do (Kokkos' OpenMP instance takes one parallel dispatch at a
// time itself; the BLAS and oneDNN take concurrent callers).
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <format>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <Kokkos_Core.hpp>

#include "tessel/core/error.hpp"
#include "tessel/runtime/capture.hpp"
#include "tessel/runtime/distributed.hpp"
#include "tessel/runtime/stream.hpp"
#include "../../env_switch.hpp"

namespace tessel::detail {
namespace {

bool async_from_environment() { return switched_on("TESSEL_ASYNC"); }

unsigned long setting(char const* name, unsigned long fallback) {
  char const* env = std::getenv(name);
  if (env == nullptr || *env == '\0') return fallback;
  char* end = nullptr;
  unsigned long v = std::strtoul(env, &end, 10);
  if (*end != '\0') throw Error(std::format("{}='{}' is not a whole number", name, env));
  return v;
}

// One lock and one signal for every queue: completions wake the queues waiting on events and the
// host waiting in a fence.
struct Shared {
  std::mutex mutex;
  std::condition_variable changed;
};
Shared& shared() {
  static Shared* s = new Shared;  // (never destroyed: a static ScopeGuard ends after statics)
  return *s;
}

struct Item {
  std::function<void(ExecSpace const&, char const*)> work;  // empty: only a wait
  Device const* device = nullptr;                            // whose instance the work launches on
  Event after;                 // another queue's event this item waits for first
  std::string label;
};

class WorkQueue {
 public:
  WorkQueue(int index, unsigned long seed, unsigned long max_delay_us)
      : rng_(seed * 1000003u + static_cast<unsigned long>(index)), max_delay_us_(max_delay_us),
        thread_([this] { serve(); }) {}
  ~WorkQueue() {
    {
      std::lock_guard lock(shared().mutex);
      stop_ = true;
    }
    shared().changed.notify_all();
    thread_.join();
  }

  // (shared().mutex held)
  std::uint64_t push(Item item) {
    items_.push_back(std::move(item));
    return ++issued_;
  }
  std::uint64_t issued() const { return issued_; }  // (shared().mutex held)
  // (shared().mutex held) An event past what was ever queued here is a stopped queue's, whose work
  // was all done (stop_host_queues).
  bool done(std::uint64_t ticket) const { return completed_ >= ticket || ticket > issued_; }
  std::exception_ptr take_failure() {  // (shared().mutex held)
    return std::exchange(failure_, nullptr);
  }

 private:
  void perturb() {
    if (max_delay_us_ == 0) return;
    auto const r = rng_();
    if (r % 4 == 0) std::this_thread::sleep_for(std::chrono::microseconds(r / 4 % (max_delay_us_ + 1)));
    else std::this_thread::yield();
  }

  void serve();

  std::deque<Item> items_;
  std::uint64_t issued_ = 0, completed_ = 0;
  std::exception_ptr failure_;
  bool stop_ = false;
  std::mt19937_64 rng_;
  unsigned long max_delay_us_;
  std::thread thread_;  // (last: it starts serving once the rest exists)
};

// Off while a Kokkos Tools library is loaded: a tool nests kernels in the regions the host thread
// pushes (a plan's steps), and kernels launched from queue threads would fall outside them.
struct Queues {
  bool active = async_from_environment() && !Kokkos::Tools::profileLibraryLoaded();
  unsigned long seed = 1, max_delay_us = 20;
  std::vector<std::unique_ptr<WorkQueue>> queues;  // by local device index; grown under shared().mutex
  Queues() {
    if (!active) return;
    seed = setting("TESSEL_ASYNC_SEED", 1);
    max_delay_us = setting("TESSEL_ASYNC_DELAY_US", 20);
  }
};
Queues& queues() {
  static Queues* q = new Queues;
  return *q;
}

int local_index(int id) { return id - distributed::process_index() * local_device_count(); }

// (shared().mutex held) The queue of the device with this global id, made on first use.
WorkQueue& queue_of(int id) {
  auto& q = queues();
  auto const k = static_cast<std::size_t>(local_index(id));
  while (q.queues.size() <= k)
    q.queues.push_back(std::make_unique<WorkQueue>(static_cast<int>(q.queues.size()), q.seed, q.max_delay_us));
  return *q.queues[k];
}

void WorkQueue::serve() {
  queue_thread = true;
  auto& s = shared();
  std::unique_lock lock(s.mutex);
  for (;;) {
    s.changed.wait(lock, [&] { return stop_ || !items_.empty(); });
    if (items_.empty()) return;  // stopping, and nothing left
    Item item = std::move(items_.front());
    items_.pop_front();
    if (item.after.device >= 0) {
      WorkQueue& other = queue_of(item.after.device);
      s.changed.wait(lock, [&] { return other.done(item.after.ticket); });
    }
    lock.unlock();
    perturb();
    if (item.work) {
      try {
        item.work(item.device->exec, item.label.c_str());
      } catch (...) {
        std::lock_guard failed(s.mutex);
        if (!failure_) failure_ = std::current_exception();
      }
    }
    item = Item{};  // (what the work held goes before it counts as done)
    lock.lock();
    ++completed_;
    s.changed.notify_all();
  }
}

// (shared().mutex held) The queue of that device, or null when it has none yet (nothing queued).
WorkQueue* find_queue(int id) {
  auto& q = queues();
  auto const k = static_cast<std::size_t>(local_index(id));
  return k < q.queues.size() ? q.queues[k].get() : nullptr;
}

void rethrow(std::exception_ptr failure) {
  if (failure) std::rethrow_exception(failure);
}

// A graph on the host (runtime/capture.hpp): the items the host thread queued while it captured,
// in that order, queued again by each launch. An item's event from inside the capture counts
// items of the capture; a launch adds what the event's queue had issued before it.
struct HostGraph {
  struct Queued {
    int device;  // global id of the queue it goes to
    Item item;
  };
  std::uint32_t number = 0;
  std::vector<int> devices;
  std::vector<Queued> items;
  std::vector<std::uint64_t> issued;  // by local device index: items recorded for that queue

  void record(int device, Item item) {
    auto const k = static_cast<std::size_t>(local_index(device));
    if (issued.size() <= k) issued.resize(k + 1, 0);
    ++issued[k];
    items.push_back({device, std::move(item)});
  }
  std::uint64_t issued_on(int device) const {
    auto const k = static_cast<std::size_t>(local_index(device));
    return k < issued.size() ? issued[k] : 0;
  }
};
thread_local std::unique_ptr<HostGraph> recording;  // the capture under way on this thread

}  // namespace

bool host_queues_active() noexcept { return queues().active; }
bool work_is_asynchronous() noexcept { return queues().active; }

void submit(Device const& d, char const* label, std::function<void(ExecSpace const&, char const*)> work) {
  if (recording) {
    recording->record(d.id, Item{std::move(work), &d, Event{}, label != nullptr ? label : ""});
    return;
  }
  auto& s = shared();
  {
    std::lock_guard lock(s.mutex);
    queue_of(d.id).push(Item{std::move(work), &d, Event{}, label != nullptr ? label : ""});
  }
  s.changed.notify_all();
}

Event record_event(Device const& d) {
  count(ordering_counts().events);
  if (!host_queues_active() || on_queue_thread()) return Event{};
  if (recording) return Event{d.id, recording->issued_on(d.id), nullptr, recording->number};
  std::lock_guard lock(shared().mutex);
  WorkQueue const* q = find_queue(d.id);
  if (q == nullptr) return Event{};
  return Event{d.id, q->issued(), nullptr};
}

void wait_event(Device const& waiter, Event const& e) {
  if (e.device < 0 || !host_queues_active() || on_queue_thread()) return;
  if (recording) {  // (an event from before the capture is complete: begin_capture fenced its devices)
    if (e.capture != recording->number || e.device == waiter.id) return;
    count(ordering_counts().waits);
    recording->record(waiter.id, Item{{}, nullptr, e, "tessel::wait"});
    return;
  }
  auto& s = shared();
  {
    std::lock_guard lock(s.mutex);
    if (e.device == waiter.id) return;  // one queue: already in order
    if (WorkQueue const* q = find_queue(e.device); q == nullptr || q->done(e.ticket)) return;
    count(ordering_counts().waits);
    queue_of(waiter.id).push(Item{{}, nullptr, e, "tessel::wait"});
  }
  s.changed.notify_all();
}

void fence_devices(std::span<int const> ids) {
  if (capture_number() != 0) return break_capture(host_wait_in_capture(ids));
  count(ordering_counts().device_fences);
  if (!host_queues_active() || on_queue_thread()) {
    ExecSpace().fence("tessel::fence_device");
    return;
  }
  auto& s = shared();
  std::exception_ptr failure;
  {
    std::unique_lock lock(s.mutex);
    for (int id : ids) {
      WorkQueue* q = find_queue(id);
      if (q == nullptr) continue;
      std::uint64_t const ticket = q->issued();
      s.changed.wait(lock, [&] { return q->done(ticket); });
      if (!failure) failure = q->take_failure();
    }
  }
  rethrow(failure);
}

void fence_device(Device const& d) {
  int const id[] = {d.id};
  fence_devices(id);
}

void stop_host_queues() {
  auto& q = queues();
  std::vector<std::unique_ptr<WorkQueue>> stopping;
  {
    std::unique_lock lock(shared().mutex);
    for (auto& queue : q.queues) {  // all done first: a queue may wait on another's event
      std::uint64_t const ticket = queue->issued();
      shared().changed.wait(lock, [&] { return queue->done(ticket); });
    }
    stopping.swap(q.queues);
  }
  stopping.clear();  // each finishes what it holds, then its thread ends
}

}  // namespace tessel::detail

namespace tessel::backend {

std::string_view graphs_unavailable(bool host_graphs_asked) {
  if (!host_graphs_asked) return "a host replays programs step by step (TESSEL_HOST_GRAPHS=1 records graphs, for tests)";
  if (!detail::host_queues_active()) return "host graphs record the host queues, which TESSEL_ASYNC=1 starts";
  return {};
}

void begin_graph_capture(std::span<int const> devices, std::uint32_t number) {
  detail::recording = std::make_unique<detail::HostGraph>();
  detail::recording->number = number;
  detail::recording->devices.assign(devices.begin(), devices.end());
}

std::shared_ptr<void> end_graph_capture(std::string& why) {
  std::shared_ptr<detail::HostGraph> graph = std::move(detail::recording);
  if (!why.empty()) return nullptr;
  return graph;
}

void launch_graph(void* native) {
  using namespace detail;
  auto const& graph = *static_cast<HostGraph const*>(native);
  // Each device's items after everything queued on any of the graph's devices: the last launch's
  // reads of the buffers this one writes, on whichever device they ran.
  wait_for_all(graph.devices, graph.devices);
  auto& s = shared();
  {
    std::lock_guard lock(s.mutex);
    std::vector<std::uint64_t> base(graph.issued.size(), 0);
    int const first = distributed::process_index() * local_device_count();
    for (std::size_t k = 0; k < base.size(); ++k) base[k] = queue_of(first + static_cast<int>(k)).issued();
    for (auto const& [device, recorded] : graph.items) {
      Item item = recorded;
      if (item.after.capture == graph.number && item.after.device >= 0) {
        item.after.ticket += base[static_cast<std::size_t>(local_index(item.after.device))];
        item.after.capture = 0;
      }
      queue_of(device).push(std::move(item));
    }
  }
  s.changed.notify_all();
}

}  // namespace tessel::backend
