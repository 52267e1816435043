#include "tessel/plan/reshard.hpp"

#include <algorithm>
#include <format>

namespace tessel::plan {
namespace {

std::string axes_text(MeshAxes const& mesh, ShardLayout::AxisList const& axes) {
  std::string s = "(";
  for (std::size_t k = 0; k < axes.size(); ++k) s += std::format("{}'{}'", k ? ", " : "", mesh.name(axes[k]).view());
  return s + ")";
}

}  // namespace

std::string describe(ReshardStep const& step) {
  char const* what = step.collective ? name(*step.collective) : step.copy ? "copy" : "local slice";
  if (!step.axes.empty()) return std::format("{} over {}", what, axes_text(step.from.mesh().axes(), step.axes));
  if (step.collective) return std::format("{} over all devices", what);
  if (!step.copy) return "local slice";
  return step.from.mesh() == step.to.mesh() ? "copy of uneven blocks" : "copy between meshes";
}

std::string to_string(std::span<ReshardStep const> steps) {
  if (steps.empty()) return "none";
  std::string s;
  for (auto const& step : steps) s += (s.empty() ? "" : " + ") + describe(step);
  return s;
}

}  // namespace tessel::plan
