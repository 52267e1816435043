#include "tessel/runtime/device.hpp"

#include <atomic>
#include <cstdlib>
#include <format>
#include <mutex>
#include <string>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/runtime/backend/devices.hpp"
#include "tessel/runtime/capture.hpp"
#include "tessel/runtime/device_placement.hpp"
#include "tessel/runtime/stream.hpp"
#include "tessel/runtime/distributed.hpp"
#include "distributed/world.hpp"
#include "device_lifetime.hpp"
#include "local_device_ids.hpp"
#include "positive_count.hpp"

namespace tessel {
namespace {

struct Registry {
  int count = -1;                // -1: not yet read from the environment
  std::vector<Device> devices;   // built lazily: Kokkos must be initialized first
  std::string placement;         // where they run, once built ("0..7 on GPU 0"; explain's last line)
  std::mutex mutex;
  // What every kernel launch and allocation asks, read without the lock once known (a lock per
  // shard was most of a small call's cost): the count (0 until known) and the built devices (null
  // until built, and again while set_device_count changes them).
  std::atomic<int> known_count{0};
  std::atomic<Device const*> built{nullptr};
};

Registry& registry() {
  static Registry* r = new Registry;  // never destroyed, as the buffer pool (a static ScopeGuard uses both)
  return *r;
}

int count_from_environment() {
  char const* env = std::getenv("TESSEL_NUM_DEVICES");
  if (env == nullptr || *env == '\0') return 1;
  if (auto n = detail::positive_count(env)) return *n;
  throw Error(std::format("TESSEL_NUM_DEVICES='{}' is not a device count between 1 and 65536", env));
}

}  // namespace

int local_device_count() {
  auto& r = registry();
  if (int known = r.known_count.load(std::memory_order_acquire); known > 0) return known;
  std::lock_guard lock(r.mutex);
  if (r.count < 0) r.count = count_from_environment();
  r.known_count.store(r.count, std::memory_order_release);
  return r.count;
}

int device_count() { return local_device_count() * distributed::process_count(); }

void set_device_count(int n) {
  if (n < 1) throw Error(std::format("set_device_count({}): a process needs at least 1 device", n));
  if (distributed::process_count() > 1)
    throw Error(std::format("set_device_count({}): this is one of {} processes, whose device counts were agreed at "
                            "start-up; set TESSEL_NUM_DEVICES for every process instead",
                            n, distributed::process_count()));
  detail::stop_host_queues();  // (their work holds the devices; queues are made again on first use)
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  r.built.store(nullptr, std::memory_order_release);
  r.count = n;
  r.known_count.store(n, std::memory_order_release);
  r.devices.clear();
}

bool is_local_device(int id) {
  int local = local_device_count();
  return id >= 0 && id / local == distributed::process_index() && id < device_count();
}

bool shares_memory(int a, int b) {
  // Devices of this process on one unit allocate in its memory (one host, or one GPU split into
  // logical devices); devices on two GPUs read each other's memory, but do not share buffers.
  return is_local_device(a) && is_local_device(b) &&
         backend::unit_of(device(a).exec) == backend::unit_of(device(b).exec);
}

Device const& device(int id) {
  auto& r = registry();
  if (Device const* built = r.built.load(std::memory_order_acquire)) {  // the devices exist: no lock
    int const first = built->id;
    if (id >= first && id < first + r.known_count.load(std::memory_order_relaxed)) return built[id - first];
  }
  int local = local_device_count();
  int n = device_count();
  if (id < 0 || id >= n) {
    if (distributed::process_count() == 1)
      throw Error(std::format("device {} does not exist: this process has {} devices (0..{})", id, n, n - 1));
    throw Error(std::format("device {} does not exist: the {} processes have {} devices (0..{})", id,
                            distributed::process_count(), n, n - 1));
  }
  int first = distributed::process_index() * local;
  if (id < first || id >= first + local)
    throw Error(std::format("device {} belongs to process {}; this is process {} of {}, with devices {}..{}", id,
                            distributed::process_of(id), distributed::process_index(), distributed::process_count(),
                            first, first + local - 1));
  std::lock_guard lock(r.mutex);
  if (r.devices.empty()) {
    if (Kokkos::is_finalized())
      throw Error("the tessel runtime was finalized (its ScopeGuard ended): tensors can still be destroyed, but not "
                  "read or computed with");
    if (!Kokkos::is_initialized())
      throw Error("tessel devices used before initialization: create a tessel::ScopeGuard first");
    auto const offered = backend::available_units();
    auto units = detail::place_devices(local, std::getenv("TESSEL_GPUS"), offered.first, offered.count, platform_name());
    auto instances = backend::make_device_instances(units);
    for (int i = 0; i < local; ++i) r.devices.push_back(Device{first + i, instances[static_cast<std::size_t>(i)]});
    r.built.store(r.devices.data(), std::memory_order_release);
    r.placement = detail::describe_placement(units, first, backend::unit_name);
  }
  return r.devices[static_cast<std::size_t>(id - first)];
}

std::string device_placement() {
  (void)device(distributed::process_index() * local_device_count());  // makes the devices
  return detail::placement_note();
}

std::string detail::placement_note() {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  return r.placement;
}

void fence_all_devices() {
  if (detail::capture_number() != 0) return detail::break_capture("a host wait for every device inside a step");
  auto& counts = detail::ordering_counts();
  detail::count(counts.all_fences);
  if (detail::host_queues_active() && !detail::on_queue_thread()) {
    detail::fence_devices(detail::local_device_ids());
    counts.device_fences.fetch_sub(1, std::memory_order_relaxed);  // (counted as a fence of all)
  }
  Kokkos::fence("tessel::fence_all_devices");
}

namespace detail {
void wait_for_all(std::span<int const> waiters, std::span<int const> on) {
  if (!work_is_asynchronous()) return;
  for (int source : on) {
    bool needed = false;
    for (int w : waiters) needed = needed || w != source;
    if (!needed) continue;
    Event const e = record_event(device(source));
    for (int w : waiters) wait_event(device(w), e);
  }
}

OrderingCounts& ordering_counts() noexcept {
  static OrderingCounts counts;
  return counts;
}
}  // namespace detail

namespace detail {

void forget_devices() {
  auto& r = registry();
  std::lock_guard lock(r.mutex);
  r.built.store(nullptr, std::memory_order_release);  // device() then says the runtime was finalized
  r.devices.clear();  // instances hold Kokkos resources
}

}  // namespace detail

}  // namespace tessel
