#include "tessel/runtime/buffer_pool.hpp"

#include <algorithm>
#include <cstdlib>
#include <format>
#include <new>
#include <map>
#include <mutex>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/runtime/memory_stats.hpp"
#include "tessel/runtime/backend/devices.hpp"
#include "tessel/runtime/backend/gemm_batch.hpp"
#include "tessel/runtime/capture.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/distributed.hpp"
#include "tessel/runtime/pool_order_check.hpp"
#include "tessel/runtime/stream.hpp"
#include "local_device_ids.hpp"

namespace tessel::detail {
namespace {

std::size_t limit_from_environment() {
  char const* env = std::getenv("TESSEL_POOL_BYTES");
  if (env == nullptr || *env == '\0') return std::size_t{4} << 30;
  return static_cast<std::size_t>(std::strtoull(env, nullptr, 10));
}

// Sizes are rounded so that tensors of nearly equal size share free lists (core/buffer_bytes.hpp).
std::size_t rounded(std::size_t bytes) { return pool_block_bytes(bytes); }

// Which devices hold how much of a buffer, carried by its deleter: a few entries left
// uninitialized past `count` (it is copied into every buffer's deleter; more devices of a block
// than it holds: charged to the first).
struct Charges {
  static constexpr std::size_t capacity = 8;
  std::size_t count = 0;
  MemoryCharge items[capacity];
  void push_back(MemoryCharge c) { items[count++] = c; }
  [[nodiscard]] MemoryCharge const* begin() const { return items; }
  [[nodiscard]] MemoryCharge const* end() const { return items + count; }
};

// The charges of a block of `size` bytes: as given, the rounding to the first; or all to the
// first local user.
Charges charges_of(std::size_t size, std::span<MemoryCharge const> given, std::span<int const> users) {
  Charges out;
  if (given.empty()) {
    for (int user : users)
      if (is_local_device(user)) {
        out.push_back({user, size});
        break;
      }
    return out;
  }
  std::size_t charged = 0;
  for (MemoryCharge const& c : given) {
    if (out.count == Charges::capacity) out.items[0].bytes += c.bytes;
    else out.push_back(c);
    charged += c.bytes;
  }
  if (size > charged) out.items[0].bytes += size - charged;
  return out;
}

// A free buffer, with the events after which nothing queued before its release uses it.
struct Free {
  void* memory;
  std::vector<Event> last_use;
};

// An event of every local device's queue now: what a released buffer waits for (work queued so
// far may still use it). Empty where work is synchronous.
std::vector<Event> every_queue_now() {
  std::vector<Event> events;
  if (!work_is_asynchronous() || !Kokkos::is_initialized()) return events;
  for (int id : local_device_ids()) events.push_back(record_event(device(id)));
  return events;
}

struct Pool {
  std::mutex mutex;
  std::multimap<std::pair<int, std::size_t>, Free> free;  // by unit, then size
  std::size_t cached = 0;
  std::size_t limit = limit_from_environment();
  // Each device's bytes in use and their high-water mark (runtime/memory_stats.hpp), by global id:
  // counted under the lock the pool takes anyway, so that counting costs no lock of its own.
  std::vector<DeviceMemoryStats> usage;

  void charge(Charges const& charges, bool taken) {  // (the lock held)
    for (MemoryCharge const& c : charges) {
      if (c.device < 0) continue;
      auto const d = static_cast<std::size_t>(c.device);
      if (d >= usage.size()) usage.resize(d + 1);
      auto& stats = usage[d];
      auto const bytes = static_cast<std::int64_t>(c.bytes);
      stats.bytes_in_use += taken ? bytes : -bytes;
      stats.peak_bytes_in_use = std::max(stats.peak_bytes_in_use, stats.bytes_in_use);
    }
  }
};

Pool& pool() {
  // Never destroyed: a ScopeGuard with static storage (created before the pool) releases it at
  // exit, after function-local statics created later are gone (fuzzer finding F2).
  static Pool* p = new Pool;
  return *p;
}

// Buffers released inside the capture under way on this thread (runtime/capture.hpp): the
// capture's later acquisitions take them first (their events are the capture's, so the waits become
// the graph's edges), and the graph keeps them at its end (its replays use them again).
struct CapturedFree {
  int unit;
  std::size_t size;
  void* memory;
  Charges charged;
  std::vector<Event> last_use;
};
thread_local std::vector<CapturedFree> captured_free;

void give_back(int unit, void* memory, std::size_t size, Charges const& charged) {
  if (capture_number() != 0) {
    captured_free.push_back({unit, size, memory, charged, every_queue_now()});
    std::lock_guard lock(pool().mutex);
    pool().charge(charged, false);
    return;
  }
  auto& p = pool();
  std::vector<Event> last_use = every_queue_now();
  {
    std::lock_guard lock(p.mutex);
    p.charge(charged, false);
    if (Kokkos::is_initialized() && p.cached + size <= p.limit) {
      p.free.emplace(std::pair{unit, size}, Free{memory, std::move(last_use)});
      p.cached += size;
      return;
    }
  }
  if (!last_use.empty()) {  // its last users first: the devices of its events, not every device
    std::vector<int> users;
    for (Event const& e : last_use) users.push_back(e.device);
    fence_devices(users);
  }
  backend::free_device_bytes(unit, memory, size);
}

bool skip_waits_for_test = false;

}  // namespace

std::shared_ptr<std::byte> acquire_device_memory(ExecSpace const& where, std::size_t bytes,
                                                 std::span<int const> users, std::span<MemoryCharge const> charges) {
  std::size_t size = rounded(bytes == 0 ? 1 : bytes);
  int const unit = backend::unit_of(where);
  void* memory = nullptr;
  std::vector<Event> last_use;
  Charges const charged = charges_of(size, charges, users);
  auto captured = std::find_if(captured_free.begin(), captured_free.end(),
                               [&](CapturedFree const& f) { return f.unit == unit && f.size == size; });
  if (captured != captured_free.end()) {  // (only inside a capture: the list is empty outside)
    memory = captured->memory;
    last_use = std::move(captured->last_use);
    captured_free.erase(captured);
  }
  {
    auto& p = pool();
    std::lock_guard lock(p.mutex);
    p.charge(charged, true);  // (given back below if no memory is found)
    if (memory != nullptr) {
      // (taken from the capture's own)
    } else if (auto it = p.free.find(std::pair{unit, size}); it != p.free.end()) {
      memory = it->second.memory;
      last_use = std::move(it->second.last_use);
      p.cached -= size;
      p.free.erase(it);
    }
  }
  if (!last_use.empty()) {
    std::vector<int> local;  // (a mesh's devices may be other processes' too)
    for (int user : users)
      if (is_local_device(user) && std::find(local.begin(), local.end(), user) == local.end()) local.push_back(user);
    if (!skip_waits_for_test)
      for (int user : local)
        for (Event const& e : last_use) wait_event(device(user), e);  // (its own queue's: none)
    check_reused(memory, size, local);
  }
  if (memory == nullptr) memory = backend::allocate_device_bytes(where, size);
  if (memory == nullptr) {
    // What the pool keeps may be what is missing, as a BFC allocator retries (once its last users are done).
    if (work_is_asynchronous()) fence_all_devices();
    release_pooled_memory();
    memory = backend::allocate_device_bytes(where, size);
  }
  if (memory == nullptr) {
    {
      std::lock_guard lock(pool().mutex);
      pool().charge(charged, false);
    }
    throw OutOfMemory(std::format("out of device memory: could not allocate {} bytes ({:.3g} GiB) on {}", size,
                                  static_cast<double>(size) / (1 << 30), backend::unit_name(unit)),
                      size);
  }
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(memory),
                                    [unit, size, charged](std::byte* m) { give_back(unit, m, size, charged); });
}

std::shared_ptr<std::byte> acquire_device_memory(Device const& user, std::size_t bytes) {
  int const users[] = {user.id};
  return acquire_device_memory(user.exec, bytes, users);
}

void skip_pool_waits_for_test(bool skip) { skip_waits_for_test = skip; }

std::vector<std::shared_ptr<void>> buffers_released_in_capture() {
  std::vector<std::shared_ptr<void>> kept;
  for (CapturedFree& f : captured_free) {
    {
      std::lock_guard lock(pool().mutex);
      pool().charge(f.charged, true);  // (the graph's, until it goes)
    }
    kept.emplace_back(f.memory, [unit = f.unit, size = f.size, charged = f.charged](void* m) {
      give_back(unit, m, size, charged);
    });
  }
  captured_free.clear();
  return kept;
}

void release_pooled_memory() {
  auto& p = pool();
  std::lock_guard lock(p.mutex);
  for (auto& [key, entry] : p.free) backend::free_device_bytes(key.first, entry.memory, key.second);
  p.free.clear();
  p.cached = 0;
}

}  // namespace tessel::detail

namespace tessel {

DeviceMemoryStats memory_stats(int device) {
  if (!is_local_device(device))
    throw Error(std::format("memory_stats: device {} is not one of this process's devices", device));
  DeviceMemoryStats stats;
  {
    auto& p = detail::pool();
    std::lock_guard lock(p.mutex);
    if (auto const d = static_cast<std::size_t>(device); d < p.usage.size()) stats = p.usage[d];
  }
  stats.kept_operand_bytes = static_cast<std::int64_t>(detail::kept_operand_bytes(device));
  return stats;
}

void reset_peak_memory_stats() {
  auto& p = detail::pool();
  std::lock_guard lock(p.mutex);
  for (auto& stats : p.usage) stats.peak_bytes_in_use = stats.bytes_in_use;
}

}  // namespace tessel

namespace tessel::detail {

std::size_t pooled_bytes() {
  auto& p = pool();
  std::lock_guard lock(p.mutex);
  return p.cached;
}

}  // namespace tessel::detail
