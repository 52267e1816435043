// The kept packed operands: per address of B, the copies made for the buffers that lay there
// (weak references: a buffer that dies leaves its copy to be dropped by the next sweep).
#include "packed_operands.hpp"

#include <atomic>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "tessel/runtime/backend/gemm_batch.hpp"
#include "tessel/runtime/rewritten_buffers.hpp"

namespace tessel::detail {
namespace {

struct Entry {
  std::weak_ptr<std::byte> buffer;
  dnnl::memory::desc plain, packed;
  int device;                                // whose GEMM made the copy (its memory_stats count it)
  std::shared_ptr<dnnl::memory const> copy;  // null: seen once, not packed yet
};

struct Kept {
  std::mutex mutex;
  std::unordered_map<void const*, std::vector<Entry>> at;
  std::size_t bytes = 0;
  std::unordered_map<int, std::size_t> device_bytes;  // by global device id
  int records_since_sweep = 0;

  void keep(Entry& e, std::shared_ptr<dnnl::memory const> copy) {
    e.copy = std::move(copy);
    bytes += e.packed.get_size();
    device_bytes[e.device] += e.packed.get_size();
  }
  void drop(Entry const& e) {
    if (!e.copy) return;
    bytes -= e.packed.get_size();
    device_bytes[e.device] -= e.packed.get_size();
  }
  // Drops the entries of buffers that died.
  void sweep() {
    records_since_sweep = 0;
    for (auto it = at.begin(); it != at.end();) {
      std::erase_if(it->second, [&](Entry const& e) {
        if (!e.buffer.expired()) return false;
        drop(e);
        return true;
      });
      it = it->second.empty() ? at.erase(it) : std::next(it);
    }
  }
};

Kept& kept() {
  static Kept k;
  return k;
}

std::atomic<std::size_t>& limit() {
  static std::atomic<std::size_t> bytes = [] {
    char const* env = std::getenv("TESSEL_PACKED_OPERANDS_MB");
    std::size_t const mb = env != nullptr && *env != '\0' ? std::strtoull(env, nullptr, 10) : 4096;
    return mb << 20;
  }();
  return bytes;
}
std::size_t limit_bytes() { return limit().load(std::memory_order_relaxed); }

}  // namespace

std::shared_ptr<dnnl::memory const> packed_operand(std::weak_ptr<std::byte> const& buffer, void const* b,
                                                   dnnl::memory::desc const& plain, dnnl::memory::desc const& packed,
                                                   int device, dnnl::engine const& engine, dnnl::stream& s) {
  if (limit_bytes() == 0) return nullptr;
  auto const owner = buffer.lock();
  if (!owner || rewritten(owner)) return nullptr;
  auto& k = kept();
  std::lock_guard lock(k.mutex);
  auto& list = k.at[b];
  Entry* found = nullptr;
  std::erase_if(list, [&](Entry const& e) {
    // Another buffer at this address: the one the entry was made for died.
    if (same_buffer(e.buffer, owner)) return false;
    k.drop(e);
    return true;
  });
  for (Entry& e : list)
    if (e.plain == plain && e.packed == packed) found = &e;
  if (found && found->copy) return found->copy;
  if (!found) {  // (read once so far)
    list.push_back(Entry{owner, plain, packed, device, nullptr});
    // The records of activations read once pile up as their buffers die: swept now and then.
    if (++k.records_since_sweep > 1024) k.sweep();
    return nullptr;
  }
  std::size_t const bytes = packed.get_size();
  if (k.bytes + bytes > limit_bytes()) {
    k.sweep();
    if (k.bytes + bytes > limit_bytes()) return nullptr;
  }
  // (found stays valid: the sweep drops only entries of dead buffers, and every entry at b is of
  // the live `owner`'s)
  k.keep(*found, packed_copy(b, plain, packed, engine, s));
  s.wait();
  return found->copy;
}

std::shared_ptr<dnnl::memory const> packed_copy(void const* b, dnnl::memory::desc const& plain,
                                                dnnl::memory::desc const& packed, dnnl::engine const& engine,
                                                dnnl::stream& s) {
  auto copy = std::make_shared<dnnl::memory>(packed, engine);
  dnnl::memory source(plain, engine, const_cast<void*>(b));
  dnnl::reorder(source, *copy).execute(s, source, *copy);
  return copy;
}

std::size_t kept_operand_bytes() {
  auto& k = kept();
  std::lock_guard lock(k.mutex);
  k.sweep();
  return k.bytes;
}

std::size_t kept_operand_bytes(int device) {
  auto& k = kept();
  std::lock_guard lock(k.mutex);
  k.sweep();
  auto const at = k.device_bytes.find(device);
  return at == k.device_bytes.end() ? 0 : at->second;
}

void limit_kept_operands_for_test(std::size_t bytes) {
  auto& k = kept();
  std::lock_guard lock(k.mutex);
  limit().store(bytes, std::memory_order_relaxed);
  // (what is kept beyond it goes)
  if (k.bytes > bytes) {
    for (auto& [b, entries] : k.at)
      for (Entry const& e : entries) k.drop(e);
    k.at.clear();
  }
}

}  // namespace tessel::detail
