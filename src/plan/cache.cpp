#include "tessel/plan/cache.hpp"

#include <unordered_map>

namespace tessel::plan {
namespace {
struct Cache {
  std::mutex mutex;
  std::unordered_map<std::uint64_t, std::vector<std::unique_ptr<CacheEntry>>> buckets;
};
Cache& cache() {
  static Cache c;
  return c;
}
}  // namespace

namespace detail {
std::unique_lock<std::mutex> lock_cache() { return std::unique_lock(cache().mutex); }
std::vector<std::unique_ptr<CacheEntry>>& bucket(std::uint64_t hash) { return cache().buckets[hash]; }
}  // namespace detail

std::size_t cached_plans() {
  auto lock = detail::lock_cache();
  std::size_t n = 0;
  for (auto const& [h, entries] : cache().buckets) n += entries.size();
  return n;
}

}  // namespace tessel::plan
