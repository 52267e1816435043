#include "tessel/runtime/buffer_pool.hpp"

#include <cstdlib>
#include <format>
#include <new>
#include <map>
#include <mutex>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/runtime/backend/devices.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/pool_order_check.hpp"

namespace tessel::detail {
namespace {

std::size_t limit_from_environment() {
  char const* env = std::getenv("TESSEL_POOL_BYTES");
  if (env == nullptr || *env == '\0') return std::size_t{4} << 30;
  return static_cast<std::size_t>(std::strtoull(env, nullptr, 10));
}

// Sizes are rounded so that tensors of nearly equal size share free lists: to 256 B below 1 MiB
// (Kokkos' own alignment is 64 B), to whole MiB above.
std::size_t rounded(std::size_t bytes) {
  constexpr std::size_t mib = std::size_t{1} << 20;
  if (bytes < mib) return (bytes + 255) / 256 * 256;
  return (bytes + mib - 1) / mib * mib;
}

struct Pool {
  std::mutex mutex;
  std::multimap<std::pair<int, std::size_t>, void*> free;  // by unit, then size
  std::vector<std::shared_ptr<std::byte>> until_fence;  // release_after_fence's
  std::size_t cached = 0;
  std::size_t limit = limit_from_environment();
};

Pool& pool() {
  // Never destroyed: a ScopeGuard with static storage (created before the pool) releases it at
  // exit, after function-local statics created later are gone (fuzzer finding F2).
  static Pool* p = new Pool;
  return *p;
}

void give_back(int unit, void* memory, std::size_t size) {
  auto& p = pool();
  {
    std::lock_guard lock(p.mutex);
    if (Kokkos::is_initialized() && p.cached + size <= p.limit) {
      check_pool_order(size);
      p.free.emplace(std::pair{unit, size}, memory);
      p.cached += size;
      return;
    }
  }
  backend::free_device_bytes(unit, memory, size);
}

}  // namespace

std::shared_ptr<std::byte> acquire_device_memory(ExecSpace const& where, std::size_t bytes) {
  std::size_t size = rounded(bytes == 0 ? 1 : bytes);
  int const unit = backend::unit_of(where);
  void* memory = nullptr;
  {
    auto& p = pool();
    std::lock_guard lock(p.mutex);
    if (auto it = p.free.find(std::pair{unit, size}); it != p.free.end()) {
      memory = it->second;
      p.cached -= size;
      p.free.erase(it);
    }
  }
  if (memory == nullptr) memory = backend::allocate_device_bytes(where, size);
  if (memory == nullptr) {
    release_pooled_memory();  // what the pool keeps may be what is missing, as a BFC allocator retries
    memory = backend::allocate_device_bytes(where, size);
  }
  if (memory == nullptr)
    throw OutOfMemory(std::format("out of device memory: could not allocate {} bytes ({:.3g} GiB) on {}", size,
                                  static_cast<double>(size) / (1 << 30), backend::unit_name(unit)),
                      size);
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(memory),
                                    [unit, size](std::byte* m) { give_back(unit, m, size); });
}

void release_after_fence(std::shared_ptr<std::byte> memory) {
  auto& p = pool();
  std::lock_guard lock(p.mutex);
  p.until_fence.push_back(std::move(memory));
}

void release_fenced_memory() {
  std::vector<std::shared_ptr<std::byte>> kept;
  {
    auto& p = pool();
    std::lock_guard lock(p.mutex);
    kept.swap(p.until_fence);
  }
  kept.clear();  // (outside the lock: giving back takes it)
}

void release_pooled_memory() {
  release_fenced_memory();
  auto& p = pool();
  std::lock_guard lock(p.mutex);
  for (auto& [key, memory] : p.free) backend::free_device_bytes(key.first, memory, key.second);
  p.free.clear();
  p.cached = 0;
}

std::size_t pooled_bytes() {
  auto& p = pool();
  std::lock_guard lock(p.mutex);
  return p.cached;
}

}  // namespace tessel::detail
