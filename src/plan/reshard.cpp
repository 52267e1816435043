#include "tessel/plan/reshard.hpp"

#include <algorithm>
#include <format>

namespace tessel::plan {
namespace {

double block_bytes(NamedSharding const& s, Shape const& shape, std::size_t element_bytes) {
  return static_cast<double>(s.shard_shape(shape).num_elements()) * static_cast<double>(element_bytes);
}

// Different meshes (shape or device order): compare each device's new block with what it and the
// others hold.
std::vector<ReshardStep> between_meshes(Shape const& shape, std::size_t element_bytes, NamedSharding const& from,
                                        NamedSharding const& to) {
  Mesh const& src = from.mesh();
  Mesh const& dst = to.mesh();
  auto src_ids = src.device_ids();
  std::vector<Box> held(static_cast<std::size_t>(src.num_devices()));
  for (int q = 0; q < src.num_devices(); ++q) held[static_cast<std::size_t>(q)] = from.layout().box(shape, q);
  bool all_same = true, all_inside = true, all_held = same_devices(src, dst);
  std::vector<std::int64_t> received(static_cast<std::size_t>(dst.num_devices()), 0);
  std::vector<std::int64_t> sent(static_cast<std::size_t>(src.num_devices()), 0);
  for (int p = 0; p < dst.num_devices(); ++p) {
    Box want = to.layout().box(shape, p);
    auto it = std::find(src_ids.begin(), src_ids.end(), dst.device_id(p));
    Box have;
    if (it != src_ids.end()) have = held[static_cast<std::size_t>(it - src_ids.begin())];
    bool local = it != src_ids.end();
    all_same = all_same && local && have == want;
    all_inside = all_inside && local && intersect(want, have).num_elements() == want.num_elements();
    all_held = all_held && std::find(held.begin(), held.end(), want) != held.end();
    std::int64_t missing = want.num_elements() - (local ? intersect(want, have).num_elements() : 0);
    received[static_cast<std::size_t>(p)] = missing;
    // Who sends: the first holder of each block (replicas the target holds are read locally).
    for (int q = 0; q < src.num_devices(); ++q) {
      auto const& block = held[static_cast<std::size_t>(q)];
      bool first = std::find(held.begin(), held.begin() + q, block) == held.begin() + q;
      if (first && !(local && have == block)) sent[static_cast<std::size_t>(q)] += intersect(want, block).num_elements();
    }
  }
  if (all_same) return {};
  double out = block_bytes(to, shape, element_bytes);
  if (all_inside) return {{std::nullopt, from, to, {}, 1, out}};
  if (all_held) return {{Collective::collective_permute, from, to, {}, dst.num_devices(), out}};
  std::int64_t most = std::max(*std::max_element(received.begin(), received.end()),
                               *std::max_element(sent.begin(), sent.end()));
  return {{std::nullopt, from, to, {}, dst.num_devices(), static_cast<double>(most) * static_cast<double>(element_bytes), true}};
}

std::string axes_text(MeshAxes const& mesh, ShardLayout::AxisList const& axes) {
  std::string s = "(";
  for (std::size_t k = 0; k < axes.size(); ++k) s += std::format("{}'{}'", k ? ", " : "", mesh.name(axes[k]).view());
  return s + ")";
}

}  // namespace

int group_size(MeshAxes const& mesh, ShardLayout::AxisList const& axes) {
  int n = 1;
  for (auto a : axes) n *= mesh.size(a);
  return n;
}

std::vector<ReshardStep> decompose(Shape const& shape, std::size_t element_bytes, NamedSharding const& from,
                                   NamedSharding const& to) {
  if (from == to) return {};
  if (!(from.mesh() == to.mesh())) return between_meshes(shape, element_bytes, from, to);
  Mesh const& mesh = from.mesh();
  std::vector<ReshardStep> out;
  for (auto const& s : decompose(from.layout(), to.layout(), shape)) {
    NamedSharding a(mesh, s.from), b(mesh, s.to);
    // Every kind's figure is the new block: what an all-gather gathers, what a local slice keeps,
    // what an all-to-all or a collective-permute delivers (for a plain move, the block held).
    double bytes = block_bytes(b, shape, element_bytes);
    int group = s.collective ? group_size(mesh.axes(), s.axes) : 1;
    out.push_back({s.collective, a, b, s.axes, group, bytes});
  }
  return out;
}

std::string describe(ReshardStep const& step) {
  char const* what = step.collective ? name(*step.collective) : step.copy ? "copy" : "local slice";
  if (!step.axes.empty()) return std::format("{} over {}", what, axes_text(step.from.mesh().axes(), step.axes));
  if (step.collective) return std::format("{} over all devices", what);
  return step.copy ? "copy between meshes" : "local slice";
}

std::string to_string(std::span<ReshardStep const> steps) {
  if (steps.empty()) return "none";
  std::string s;
  for (auto const& step : steps) s += (s.empty() ? "" : " + ") + describe(step);
  return s;
}

}  // namespace tessel::plan
