// Explicit collectives (expr/manual_collective.hpp): resolving a call's axis names against the
// running shard_map's mesh, checking it against the operand's shape, and the result's shape.
#include <algorithm>
#include <format>
#include <string>

#include "tessel/core/error.hpp"
#include "tessel/expr/manual_collective.hpp"
#include "tessel/expr/manual_scope.hpp"

namespace tessel {

namespace detail {
namespace {
thread_local Mesh const* active_mesh = nullptr;
}

Mesh const* active_shard_map_mesh() { return active_mesh; }

ShardMapScope::ShardMapScope(Mesh const& mesh) {
  if (active_mesh != nullptr)
    throw Error(std::format("shard_map over {} called inside the body of a shard_map over {}: tessel's shard_map "
                            "regions do not nest; write the inner collectives in the outer body",
                            to_string(mesh), to_string(*active_mesh)));
  active_mesh = &mesh;
}
ShardMapScope::~ShardMapScope() { active_mesh = nullptr; }
}  // namespace detail

char const* manual_name(ManualKind kind) {
  switch (kind) {
    case ManualKind::psum: return "psum";
    case ManualKind::pmax: return "pmax";
    case ManualKind::pmin: return "pmin";
    case ManualKind::all_gather: return "all_gather";
    case ManualKind::psum_scatter: return "psum_scatter";
    case ManualKind::all_to_all: return "all_to_all";
    case ManualKind::ppermute: return "ppermute";
  }
  return "?";
}

std::uint32_t manual_varying(ManualCollectiveSpec const& spec, std::uint32_t operand) {
  std::uint32_t const mask = spec.split;
  switch (spec.kind) {
    case ManualKind::psum:
    case ManualKind::pmax:
    case ManualKind::pmin:
    case ManualKind::all_gather: return operand & ~mask;
    case ManualKind::psum_scatter:
    case ManualKind::all_to_all: return operand | mask;
    case ManualKind::ppermute:
      // Every member a target: each gets some member's block, equal where the blocks are equal.
      return static_cast<int>(spec.perm.size()) == spec.group ? operand : operand | mask;
  }
  return operand | mask;
}

namespace detail {
namespace {

// A dimension index in [-rank, rank) (or [-rank - 1, rank] for a new dimension), normalized.
std::uint8_t dimension(char const* op, char const* what, int d, Shape const& shape, bool new_dim) {
  int const rank = shape.rank() + (new_dim ? 1 : 0);
  if (d < -rank || d >= rank)
    throw Error(std::format("{}: {} {} is out of range for an operand of shape {} (rank {}{})", op, what, d,
                            to_string(shape), shape.rank(), new_dim ? ", plus the new dimension" : ""));
  return static_cast<std::uint8_t>(d < 0 ? d + rank : d);
}

std::string axes_words(MeshAxes const& mesh, ManualCollectiveSpec const& spec) {
  std::string s = "(";
  for (std::size_t k = 0; k < spec.mesh_axes.size(); ++k)
    s += std::format("{}'{}'", k ? ", " : "", mesh.name(spec.mesh_axes[k]).view());
  return s + (spec.mesh_axes.size() == 1 ? ",)" : ")");
}

// The operand's dimension `d` must split into `n` equal pieces (tiled) or have exactly n (not).
void check_pieces(char const* op, char const* what, std::size_t d, Shape const& shape, int n, bool tiled,
                  std::string const& axes) {
  std::int64_t size = shape[d];
  if (tiled && size % n != 0)
    throw Error(std::format("{}: {} {} of the operand of shape {} has size {}, not divisible by the {} devices of "
                            "mesh axes {}",
                            op, what, d, to_string(shape), size, n, axes));
  if (!tiled && size != n)
    throw Error(std::format("{}: {} {} of the operand of shape {} has size {}, but without tiled it must equal the "
                            "{} devices of mesh axes {} (or pass tiled = true)",
                            op, what, d, to_string(shape), size, n, axes));
}

Shape erase_dim(Shape const& s, std::size_t d) {
  Shape out;
  for (std::size_t k = 0; k < s.size(); ++k)
    if (k != d) out.push_back(s[k]);
  return out;
}
Shape insert_dim(Shape const& s, std::size_t d, std::int64_t size) {
  Shape out;
  for (std::size_t k = 0; k <= s.size(); ++k) {
    if (k == d) out.push_back(size);
    if (k < s.size()) out.push_back(s[k]);
  }
  return out;
}

}  // namespace

std::pair<ManualCollectiveSpec, Shape> manual_collective(ManualRequest r, Shape const& operand) {
  auto const& names = r.axes.axes();
  Mesh const* mesh = active_shard_map_mesh();
  std::string first = names.empty() ? std::string("?") : std::string(names[0].view());
  if (mesh == nullptr)
    throw Error(std::format("{}: axis name '{}' is not bound: explicit collectives run inside shard_map(f, mesh, "
                            "in_specs, out_specs) and name the axes of its mesh",
                            r.op, first));
  MeshAxes const& axes = mesh->axes();
  if (names.empty()) throw Error(std::format("{}: name at least one axis of the mesh {}", r.op, to_string(axes)));
  ManualCollectiveSpec spec;
  spec.kind = r.kind;
  for (auto const& name : names) {
    auto a = axes.find(name.view());
    if (!a) throw Error(std::format("{}: the shard_map's mesh {} has no axis '{}'", r.op, to_string(axes), name.view()));
    if (std::find(spec.mesh_axes.begin(), spec.mesh_axes.end(), *a) != spec.mesh_axes.end())
      throw Error(std::format("{}: mesh axis '{}' is named twice", r.op, name.view()));
    spec.mesh_axes.push_back(static_cast<std::uint8_t>(*a));
    spec.group *= axes.size(*a);
    if (axes.size(*a) > 1) spec.split |= 1u << *a;
  }
  int const n = spec.group;
  std::string const words = axes_words(axes, spec);
  spec.tiled = r.tiled;
  Shape out = operand;
  switch (r.kind) {
    case ManualKind::psum:
    case ManualKind::pmax:
    case ManualKind::pmin: break;
    case ManualKind::all_gather:
      if (r.tiled && operand.rank() == 0)
        throw Error(std::format("{}: a tiled all_gather needs an operand of rank at least 1, got shape {}", r.op,
                                to_string(operand)));
      spec.dim = dimension(r.op, "axis", r.dim, operand, !r.tiled);
      if (r.tiled) out[spec.dim] *= n;
      else out = insert_dim(operand, spec.dim, n);
      break;
    case ManualKind::psum_scatter:
      spec.dim = dimension(r.op, "scatter_dimension", r.dim, operand, false);
      check_pieces(r.op, "scatter_dimension", spec.dim, operand, n, r.tiled, words);
      if (r.tiled) out[spec.dim] /= n;
      else out = erase_dim(operand, spec.dim);
      break;
    case ManualKind::all_to_all:
      spec.dim = dimension(r.op, "split_axis", r.dim, operand, false);
      spec.dim2 = dimension(r.op, "concat_axis", r.dim2, operand, false);
      check_pieces(r.op, "split_axis", spec.dim, operand, n, r.tiled, words);
      if (r.tiled) {
        out[spec.dim] /= n;
        out[spec.dim2] *= n;
      } else {
        out = insert_dim(erase_dim(operand, spec.dim), spec.dim2, n);
      }
      break;
    case ManualKind::ppermute: {
      std::vector<int> source_of(static_cast<std::size_t>(n), -1), target_of(static_cast<std::size_t>(n), -1);
      for (auto [s, t] : r.perm) {
        for (int m : {s, t})
          if (m < 0 || m >= n)
            throw Error(std::format("{}: perm pair ({}, {}) names member {}, but mesh axes {} have {} devices "
                                    "(members 0 to {})",
                                    r.op, s, t, m, words, n, n - 1));
        auto& earlier_target = target_of[static_cast<std::size_t>(s)];
        if (earlier_target >= 0)
          throw Error(std::format("{}: perm is not a permutation: member {} is the source of ({}, {}) and ({}, {})",
                                  r.op, s, s, earlier_target, s, t));
        auto& earlier_source = source_of[static_cast<std::size_t>(t)];
        if (earlier_source >= 0)
          throw Error(std::format("{}: perm is not a permutation: member {} is the target of ({}, {}) and ({}, {})",
                                  r.op, t, earlier_source, t, s, t));
        earlier_target = t;
        earlier_source = s;
      }
      spec.perm = std::move(r.perm);
      break;
    }
  }
  return {std::move(spec), out};
}

}  // namespace detail
}  // namespace tessel
