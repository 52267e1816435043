#include "tessel/tools/visualize.hpp"

#include <algorithm>
#include <format>
#include <map>
#include <string>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/runtime/device.hpp"

namespace tessel {
namespace {

struct Glyphs {
  char const *h, *v, *top_left, *top, *top_right, *left, *cross, *right, *bottom_left, *bottom, *bottom_right;
};
constexpr Glyphs utf8{"─", "│", "┌", "┬", "┐", "├", "┼", "┤", "└", "┴", "┘"};
constexpr Glyphs ascii{"-", "|", "+", "+", "+", "+", "+", "+", "+", "+", "+"};

std::string repeat(char const* s, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

std::string centered(std::string const& label, std::size_t width) {
  std::size_t left = (width - label.size()) / 2;
  return std::string(left, ' ') + label + std::string(width - label.size() - left, ' ');
}

}  // namespace

std::string render_sharding(Shape const& shape, NamedSharding const& sharding, VisualizeOptions options) {
  if (shape.rank() != 1 && shape.rank() != 2)
    throw Error(std::format("visualize_array_sharding draws 1-D and 2-D tensors; shape {} has rank {}",
                            to_string(shape), shape.rank()));
  // Blocks are keyed by (row range, column range); a 1-D tensor is one row of column blocks.
  auto map = sharding.devices_indices_map(shape);
  auto key = [&](Box const& b) {
    IndexRange row = shape.rank() == 2 ? b[0] : IndexRange{0, 1};
    return std::pair{row.start, b[shape.rank() - 1].start};
  };
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<int>> holders;
  std::map<std::int64_t, std::int64_t> col_size;  // by column start: the block's width in elements
  for (auto const& [device_id, box] : map) {
    if (box.empty()) continue;  // a device past an uneven end holds nothing to draw
    holders[key(box)].push_back(device_id);
    col_size[box[shape.rank() - 1].start] = box[shape.rank() - 1].size();
  }

  // The grid: the distinct row starts and column starts of the blocks, in order.
  // (std algorithms, not range-v3: nvcc's host pass cannot compile range-v3.)
  auto starts = [&](auto part) {
    std::vector<std::int64_t> v;
    for (auto const& held : holders) v.push_back(part(held.first));
    std::ranges::sort(v);
    v.erase(std::ranges::unique(v).begin(), v.end());
    return v;
  };
  std::vector<std::int64_t> const rows = starts([](auto const& k) { return k.first; });
  std::vector<std::int64_t> const cols = starts([](auto const& k) { return k.second; });

  std::string platform(platform_name());
  std::transform(platform.begin(), platform.end(), platform.begin(), [](char c) { return static_cast<char>(c - 32); });
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> labels;
  std::size_t width = 0;
  for (auto& [k, ids] : holders) {
    std::sort(ids.begin(), ids.end());
    std::string label = platform + " ";
    for (std::size_t k = 0; k < ids.size(); ++k) label += (k ? "," : "") + std::to_string(ids[k]);
    width = std::max(width, label.size());
    labels[k] = label;
  }
  width = std::max<std::size_t>(width + 6, 11);
  // Columns drawn to scale when an uneven split makes them differ, as JAX draws a jitted result's
  // uneven blocks: the widest block gets `width`, the others their share (room for the label kept).
  std::int64_t widest = 0;
  for (auto const& [start, size] : col_size) widest = std::max(widest, size);
  std::size_t const label_room = width - 6 + 2;
  auto width_of = [&](std::int64_t col) {
    auto scaled = static_cast<std::size_t>((static_cast<double>(width) * static_cast<double>(col_size[col])) /
                                               static_cast<double>(widest) + 0.5);
    return std::max(scaled, label_room);
  };
  // A few text lines per block when there are few blocks down, so the picture keeps its shape.
  std::size_t lines = rows.size() == 1 ? 3 : rows.size() <= 4 ? 3 : 1;

  Glyphs const& g = options.style == BoxStyle::utf8 ? utf8 : ascii;
  auto rule = [&](char const* left, char const* mid, char const* right) {
    std::string s = left;
    for (std::size_t c = 0; c < cols.size(); ++c) s += repeat(g.h, width_of(cols[c])) + (c + 1 < cols.size() ? mid : right);
    return s + "\n";
  };
  std::string out = rule(g.top_left, g.top, g.top_right);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::size_t line = 0; line < lines; ++line) {
      std::string s = g.v;
      for (auto col : cols)
        s += (line == lines / 2 ? centered(labels[{rows[r], col}], width_of(col)) : std::string(width_of(col), ' ')) + g.v;
      out += s + "\n";
    }
    out += r + 1 < rows.size() ? rule(g.left, g.cross, g.right) : rule(g.bottom_left, g.bottom, g.bottom_right);
  }
  return out;
}

std::string render_blocks(Shape const& block, Mesh const& mesh, std::uint32_t varying, VisualizeOptions options) {
  // The mesh drawn as a tensor with one element per device: rows along the first axis, columns
  // along the others (row-major), so each cell names the device whose block it is.
  MeshAxes const& axes = mesh.axes();
  Shape cells;
  FixedVector<DimSpec, max_rank> dims;
  cells.push_back(axes.size(0));
  dims.push_back(DimSpec(axes.name(0)));
  if (axes.num_axes() > 1) {
    std::int64_t rest = 1;
    FixedVector<AxisName, max_mesh_axes> names;
    for (std::size_t a = 1; a < axes.num_axes(); ++a) {
      rest *= axes.size(a);
      names.push_back(axes.name(a));
    }
    cells.push_back(rest);
    dims.push_back(DimSpec::of(names));
  }
  std::string differ = varying_text(axes, varying);
  return std::format("per-device {} blocks inside shard_map over {}, one per device, differing along {}:\n{}",
                     to_string(block), to_string(axes), differ.empty() ? std::string("no axis") : differ,
                     render_sharding(cells, NamedSharding(mesh, PartitionSpec::from_dims(dims)), options));
}

}  // namespace tessel
