#pragma once
// The global ids of this process's devices, in order (src/runtime only).
#include <vector>

#include "tessel/runtime/device.hpp"
#include "tessel/runtime/distributed.hpp"

namespace tessel::detail {

inline std::vector<int> local_device_ids() {
  int const n = local_device_count();
  int const first = distributed::process_index() * n;
  std::vector<int> ids(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) ids[static_cast<std::size_t>(k)] = first + k;
  return ids;
}

}  // namespace tessel::detail
