// The donated tensors: a set of weak references, so a tensor that dies without its donation being
// taken is forgotten, and memory a new tensor gets at the same address is never taken for it.
#include "tessel/runtime/donate.hpp"

#include <algorithm>
#include <mutex>

#include "tessel/runtime/rewritten_buffers.hpp"

namespace tessel::detail {
namespace {

struct Donations {
  std::mutex mutex;
  std::vector<std::weak_ptr<TensorImpl const>> tensors;
};
Donations& donations() {
  static Donations d;
  return d;
}

// Buffers rewritten in place (runtime/rewritten_buffers.hpp): weak references, as the donations.
struct Rewritten {
  std::mutex mutex;
  std::vector<std::weak_ptr<std::byte>> buffers;
};
Rewritten& rewritten_buffers() {
  static Rewritten r;
  return r;
}

}  // namespace

void mark_donated(std::shared_ptr<TensorImpl const> const& t) {
  auto& d = donations();
  std::lock_guard lock(d.mutex);
  std::erase_if(d.tensors, [](auto const& w) { return w.expired(); });
  d.tensors.push_back(t);
}

bool take_donation(TensorImpl const& t) {
  auto& d = donations();
  std::lock_guard lock(d.mutex);
  auto it = std::find_if(d.tensors.begin(), d.tensors.end(), [&](auto const& w) { return w.lock().get() == &t; });
  if (it == d.tensors.end()) return false;
  d.tensors.erase(it);
  // The op that takes the donation writes over these buffers.
  for (auto const& shard : t.shards)
    if (shard.memory) note_rewritten(shard.memory);
  return true;
}

void note_rewritten(std::shared_ptr<std::byte> const& memory) {
  auto& r = rewritten_buffers();
  std::lock_guard lock(r.mutex);
  std::erase_if(r.buffers, [](auto const& w) { return w.expired(); });
  if (std::none_of(r.buffers.begin(), r.buffers.end(), [&](auto const& w) { return same_buffer(w, memory); }))
    r.buffers.push_back(memory);
}

bool rewritten(std::shared_ptr<std::byte> const& memory) {
  auto& r = rewritten_buffers();
  std::lock_guard lock(r.mutex);
  return std::any_of(r.buffers.begin(), r.buffers.end(), [&](auto const& w) { return same_buffer(w, memory); });
}

bool is_donated(TensorImpl const& t) {
  auto& d = donations();
  std::lock_guard lock(d.mutex);
  return std::any_of(d.tensors.begin(), d.tensors.end(), [&](auto const& w) { return w.lock().get() == &t; });
}

}  // namespace tessel::detail
