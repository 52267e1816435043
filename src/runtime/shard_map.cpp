// shard_map's run-time part (runtime/shard_map.hpp): the body's scope, arguments seen as
// per-device blocks, results laid out by out_specs after the replication check, axis_index, and
// the record explain prints.
#include "tessel/runtime/shard_map.hpp"
#include "tessel/runtime/stream.hpp"

#include <format>
#include <string>

#include "tessel/core/error.hpp"
#include "tessel/runtime/device.hpp"

namespace tessel {
namespace detail {

namespace {
// The mesh axes (of more than one device) a sharding splits a tensor over.
std::uint32_t split_axes(NamedSharding const& s) {
  std::uint32_t mask = 0;
  MeshAxes const& axes = s.mesh().axes();
  for (std::size_t a = 0; a < axes.num_axes(); ++a)
    if (axes.size(a) > 1 && s.layout().uses_axis(a)) mask |= 1u << a;
  return mask;
}

std::string spec_list(std::vector<PartitionSpec> const& specs) {
  std::string s = "(";
  for (std::size_t k = 0; k < specs.size(); ++k) s += (k ? ", " : "") + to_string(specs[k]);
  return s + (specs.size() == 1 ? ",)" : ")");
}
}  // namespace

thread_local ShardMapRecorder* shard_map_recorder = nullptr;
void record_plan_text(std::string text) {
  if (shard_map_recorder) shard_map_recorder->entries.push_back("plan:\n" + std::move(text));
}
void record_shard_map(Mesh const& mesh, std::vector<PartitionSpec> const& in, std::vector<PartitionSpec> const& out) {
  if (shard_map_recorder)
    shard_map_recorder->entries.push_back(
        std::format("shard_map over {}: in_specs {} -> out_specs {}; its body runs on each device's block with the "
                    "collectives it writes (the planner adds none)\n",
                    to_string(mesh), spec_list(in), spec_list(out)));
}

ShardMapExplainer::ShardMapExplainer() : previous_(shard_map_recorder) { shard_map_recorder = &recorder_; }
ShardMapExplainer::~ShardMapExplainer() { shard_map_recorder = previous_; }

std::string ShardMapExplainer::text() const {
  std::string s;
  for (auto const& e : recorder_.entries) s += "-- " + e;
  return s;
}

void check_shard_map_arity(char const* what, std::size_t specs, std::size_t values) {
  if (specs != values)
    throw Error(std::format("shard_map: {} {} for {} {}; give one per {}", specs, what, values,
                            std::string_view(what) == "in_specs" ? (values == 1 ? "argument" : "arguments")
                                                                 : (values == 1 ? "result" : "results"),
                            std::string_view(what) == "in_specs" ? "argument" : "result"));
}

ImplPtr local_blocks(ImplPtr const& global, NamedSharding const& sharding, std::size_t arg) {
  if (global->varying)
    throw Error(std::format("shard_map: argument {} is a per-device value of another shard_map's body (it differs "
                            "along mesh axes {}); return it from that body through out_specs first",
                            arg, varying_text(global->sharding.mesh().axes(), global->varying)));
  // The body is planned once, for one local shape: an uneven split would give the last devices
  // blocks of another shape (JAX's shard_map refuses it as well).
  ShardLayout const& layout = sharding.layout();
  for (std::size_t d = 0; d < global->shape.size(); ++d) {
    if (global->shape[d] % layout.shards_along(d) == 0) continue;
    std::string axes;
    for (auto a : layout.dim_axes(d)) axes += std::format("{}'{}'", axes.empty() ? "" : ", ", layout.mesh().name(a).view());
    throw Error(std::format("shard_map: argument {} of shape {} with in_specs {}: dimension {} has size {}, which does "
                            "not split evenly over the {} devices of mesh axes ({}); the body sees one block shape, so "
                            "pad the argument or split another dimension",
                            arg, to_string(global->shape), to_string(sharding.spec()), d, global->shape[d],
                            layout.shards_along(d), axes));
  }
  Shape local = layout.block_shape(global->shape);
  auto t = std::make_shared<TensorImpl>(
      TensorImpl{local, global->dtype, replicated(sharding.mesh()), global->shards, split_axes(sharding)});
  for (auto& s : t->shards) s.index = Box::whole(local);
  return t;
}

ImplPtr assemble_blocks(ImplPtr local, Mesh const& mesh, PartitionSpec const& spec, std::size_t output) {
  NamedSharding const blocks = replicated(mesh);
  if (!(local->sharding == blocks)) {
    // A value computed from no argument (a constant): every device gets it.
    if (local->varying)
      throw Error(std::format("shard_map: result {} is a per-device value on {}, not on the shard_map's {}", output,
                              to_string(local->sharding.mesh()), to_string(mesh)));
    local = reshard(*local, blocks);
  }
  ShardLayout layout(mesh.axes(), spec);
  if (spec.size() > local->shape.size())
    throw Error(std::format("shard_map: out_specs {} for result {} has {} entries, but the body's result has shape {} "
                            "(rank {})",
                            to_string(spec), output, spec.size(), to_string(local->shape), local->shape.size()));
  std::uint32_t named = split_axes(NamedSharding(mesh, spec));
  if (std::uint32_t differ = local->varying & ~named) {
    std::string axes = varying_text(mesh.axes(), differ);
    throw Error(std::format(
        "shard_map: out_specs {} for result {} replicates it along mesh axis {}, but its blocks differ along {}: it "
        "is computed from an argument split over {} (or from axis_index, psum_scatter, all_to_all or a partial "
        "ppermute over it) and no psum, pmax, pmin, pmean or all_gather over {} makes the blocks equal; name {} in "
        "out_specs, or reduce over it in the body",
        to_string(spec), output, axes, axes, axes, axes, axes));
  }
  Shape global = local->shape;
  for (std::size_t d = 0; d < spec.size(); ++d) global[d] *= layout.shards_along(d);
  NamedSharding sharding(mesh, spec);
  auto t = std::make_shared<TensorImpl>(TensorImpl{global, local->dtype, sharding, local->shards, 0});
  for (std::size_t pos = 0; pos < t->shards.size(); ++pos)
    t->shards[pos].index = sharding.layout().box(global, static_cast<int>(pos));
  return t;
}

}  // namespace detail

namespace lax {
Tensor<std::int32_t> axis_index(AxisNames const& axes) {
  // Resolved and checked as a collective over those axes would be.
  auto [spec, shape] = tessel::detail::manual_collective({"lax::axis_index", ManualKind::psum, axes}, Shape{});
  Mesh const& mesh = *tessel::detail::active_shard_map_mesh();
  auto t = tessel::detail::TensorImpl::allocate(Shape{}, DType::int32, replicated(mesh));
  for (std::size_t pos : tessel::detail::local_positions(*t)) {
    auto coords = mesh.axes().coords(static_cast<int>(pos));
    std::int32_t k = 0;
    for (auto a : spec.mesh_axes) k = k * mesh.axes().size(a) + coords[a];
    auto& shard = t->shards[pos];
    Device const& d = device(shard.device);
    auto* at = reinterpret_cast<std::int32_t*>(shard.bytes.data());
    tessel::detail::enqueue(d, "tessel::axis_index", [at, k](ExecSpace const& exec, char const*) {
      Kokkos::deep_copy(exec, Kokkos::View<std::int32_t*, MemSpace, Kokkos::MemoryUnmanaged>(at, 1), k);
    });
  }
  t->varying = spec.split;
  return Tensor<std::int32_t>(std::move(t));
}
}  // namespace lax

}  // namespace tessel
