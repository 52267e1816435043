// The donated tensors: a set of weak references, so a tensor that dies without its donation being
// taken is forgotten, and memory a new tensor gets at the same address is never taken for it.
#include "tessel/runtime/donate.hpp"

#include <algorithm>
#include <mutex>

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
  return true;
}

bool is_donated(TensorImpl const& t) {
  auto& d = donations();
  std::lock_guard lock(d.mutex);
  return std::any_of(d.tensors.begin(), d.tensors.end(), [&](auto const& w) { return w.lock().get() == &t; });
}

}  // namespace tessel::detail
