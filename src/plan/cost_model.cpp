#include "tessel/plan/cost_model.hpp"

#include <algorithm>

namespace tessel::plan {

CostModel& cost_model() {
  static CostModel model;
  return model;
}

std::size_t reshard_bytes(Shape const& shape, std::size_t element_bytes, NamedSharding const& from,
                          NamedSharding const& to) {
  if (from == to) return 0;
  Mesh const& src = from.mesh();
  Mesh const& dst = to.mesh();
  std::int64_t crossing = 0;
  for (int p = 0; p < dst.num_devices(); ++p) {
    Box want = to.layout().box(shape, p);
    std::int64_t local = 0;
    auto ids = src.device_ids();
    auto it = std::find(ids.begin(), ids.end(), dst.device_id(p));
    if (it != ids.end()) local = intersect(want, from.layout().box(shape, static_cast<int>(it - ids.begin()))).num_elements();
    crossing += want.num_elements() - local;
  }
  return static_cast<std::size_t>(crossing) * element_bytes;
}

}  // namespace tessel::plan
