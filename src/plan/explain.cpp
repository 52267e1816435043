// explain: the instruction list as text and as JSON, and the plan's fingerprint. Both read the
// same Steps the executor runs.
#include <algorithm>
#include <bit>
#include <format>
#include <mutex>
#include <vector>

#include "tessel/plan/cache.hpp"
#include "tessel/plan/passes.hpp"
#include "tessel/plan/cost_analysis.hpp"
#include "tessel/plan/memory_analysis.hpp"

namespace tessel::plan {

std::string axes_text(Mesh const& mesh, ShardLayout::AxisList const& axes) {
  std::string s = "(";
  for (std::size_t k = 0; k < axes.size(); ++k) s += std::format("{}'{}'", k ? ", " : "", mesh.axes().name(axes[k]).view());
  return s + ")";
}

std::string axes_label(Mesh const& mesh, ShardLayout::AxisList const& axes) {
  std::string s;
  for (std::size_t k = 0; k < axes.size(); ++k) s += std::format("{}{}", k ? "," : "", mesh.axes().name(axes[k]).view());
  return s;
}

std::string block_shapes_text(NamedSharding const& sharding, Shape const& shape) {
  std::vector<Shape> seen;
  std::string s;
  for (int p = 0; p < sharding.mesh().num_devices(); ++p) {
    Shape local = sharding.shard_shape(shape, p);
    if (std::find(seen.begin(), seen.end(), local) != seen.end()) continue;
    seen.push_back(local);
    if (!s.empty()) s += " or ";
    for (std::size_t d = 0; d < local.size(); ++d) s += std::format("{}{}", d ? "x" : "", local[d]);
  }
  return s;
}

std::string type_text(GraphNode const& n) {
  std::string s = std::format("{}[", n.dtype);
  for (std::size_t d = 0; d < n.shape.size(); ++d) s += std::format("{}{}", d ? "," : "", n.shape[d]);
  return s + "]";
}

std::string region_kernel_text(Plan const& plan, Step const& step, std::string_view what) {
  auto const made = *made_sharding(plan, step);
  std::string ops;
  for (std::size_t k = 0; k < step.ops.size(); ++k) ops += (k ? ", " : "") + step.ops[k];
  auto count = step.ops.size();
  return std::format("kernel    {} -> {} {} on {} devices: fused {} op{} [{}]", what, type_text(node_of(plan, step)),
                     to_string(made.spec()), made.mesh().num_devices(), count, count == 1 ? "" : "s", ops);
}

std::string reduction_text(Plan const& plan, Step const& step, std::string_view from) {
  NodePlan const& p = plan_of(plan, step.node);
  std::string axes = axes_text(p.partial->mesh(), step.axes);
  if (step.collective == Collective::all_reduce)
    return std::format("all-reduce {} over mesh axes {} (groups of {}): {:.0f} bytes per device, est {:.1f} us (from {})",
                       name(step.combine), axes, step.group, step.bytes, step.estimate_us, from);
  return std::format("reduce-scatter {} over mesh axes {} (groups of {}) -> {}: {:.0f} bytes per device, est {:.1f} us "
                     "(from {})",
                     name(step.combine), axes, step.group, to_string(p.out->spec()), step.bytes, step.estimate_us, from);
}

// A sharding change's step (Scheduler::reshard_steps): one of the collectives or copies it amounts
// to, or a change of the mesh's description alone.
std::string reshard_text(Plan const& plan, Step const& step) {
  GraphNode const& n = node_of(plan, step);
  NamedSharding const& from = *step.from;
  NamedSharding const& to = *step.to;
  if (step.kind == StepKind::reshard && std::string_view(step.name) == "reshard")
    return std::format("reshard   {} {} {} -> {} (no data moves): 0 bytes cross devices, est 0.0 us ({})", step.why,
                       type_text(n), to_string(from.spec()), to_string(to.spec()), n.op);
  bool const copy = std::string_view(step.name) == "copy";
  std::optional<Collective> collective;
  if (step.kind == StepKind::collective) collective = step.collective;
  ReshardStep part{collective, from, to, step.axes, step.group, step.bytes, copy};
  std::string change = std::format("{} {} {} -> {}", step.why, type_text(n), to_string(from.spec()), to_string(to.spec()));
  if (!collective) {
    double crossing = copy ? static_cast<double>(reshard_bytes(n.shape, n.dtype_bytes, from, to)) : 0.0;
    return std::format("reshard   {} ({}): {:.0f} bytes cross devices, est {:.1f} us ({})", change, describe(part), crossing,
                       step.estimate_us, n.op);
  }
  return std::format("{} (groups of {}): {}: {:.0f} bytes per device, est {:.1f} us ({})", describe(part), step.group,
                     change, step.bytes, step.estimate_us, n.op);
}

std::string to_string(Plan const& plan, MemoryAnalysis const* memory, std::string_view devices) {
  std::string s;
  for (auto const& step : plan.steps) s += step_text(plan, step) + "\n";
  if (plan.steps.empty()) return s + "(nothing to run: the result is an input)\n";
  s += cost_analysis_text(plan);
  if (memory != nullptr) s += memory_analysis_text(*memory);
  s += "cost model: " + plan.priced_by + "\n";
  if (!devices.empty()) s += std::format("devices: {}\n", devices);
  return s;
}

namespace {

std::string json_string(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) out += std::format("\\u{:04x}", static_cast<int>(c));
    else out += c;
  }
  return out + "\"";
}

}  // namespace

std::string to_json(Plan const& plan, MemoryAnalysis const* memory, std::string_view devices) {
  auto costs = cost_analysis(plan);
  auto strings = [](std::vector<std::string> const& list) {
    std::string out;
    for (std::size_t j = 0; j < list.size(); ++j) out += (j ? ", " : "") + json_string(list[j]);
    return out;
  };
  double flops = 0, read = 0, written = 0, us = 0;
  std::string s = std::format("{{\"fingerprint\": \"{:016x}\", \"steps\": [", plan.fingerprint());
  for (std::size_t k = 0; k < plan.steps.size(); ++k) {
    Step const& st = plan.steps[k];
    InstructionCost const& c = costs[k];
    std::string operands;
    for (std::size_t j = 0; j < st.operands.size(); ++j) operands += std::format("{}{}", j ? ", " : "", st.operands[j]);
    // The cost analysis (plan/cost_analysis.hpp): what every step has, then what some kinds add.
    std::string cost = std::format(", \"flops\": {}, \"bytes_read\": {}, \"bytes_written\": {}", c.flops,
                                   c.bytes_read, c.bytes_written);
    if (!c.ops.empty()) cost += std::format(", \"ops\": [{}]", strings(c.ops));
    if (c.m > 0) cost += std::format(", \"batch\": {}, \"m\": {}, \"n\": {}, \"k\": {}", c.batch, c.m, c.n, c.k);
    if (!c.blocks.empty()) cost += ", \"uneven_blocks\": " + json_string(c.blocks);
    if (!c.groups.empty()) {
      std::string groups;
      for (std::size_t j = 0; j < c.groups.size(); ++j) {
        groups += j ? ", [" : "[";
        for (std::size_t d = 0; d < c.groups[j].size(); ++d) groups += std::format("{}{}", d ? ", " : "", c.groups[j][d]);
        groups += "]";
      }
      cost += std::format(", \"mesh_axes\": [{}], \"replica_groups\": [{}]", strings(c.mesh_axes), groups);
    }
    s += std::format(
        "{}\n  {{\"kind\": \"{}\", \"label\": {}, \"node\": {}, \"operands\": [{}], \"devices\": {}, \"bytes\": {}, "
        "\"estimate_us\": {}{}, \"text\": {}}}",
        k ? "," : "", kind_name(st), json_string(st.label), st.node, operands, st.devices, st.bytes, c.estimate_us,
        cost, json_string(step_text(plan, st)));
    flops += c.flops;
    read += c.bytes_read;
    written += c.bytes_written;
    us += c.estimate_us;
  }
  s += plan.steps.empty() ? "]" : "\n]";
  // The whole program's, as JAX's compiled.cost_analysis() sums it (per device).
  s += std::format(",\n \"cost_analysis\": {{\"flops\": {}, \"bytes_read\": {}, \"bytes_written\": {}, "
                   "\"bytes_accessed\": {}, \"estimate_us\": {}}}",
                   flops, read, written, read + written, us);
  if (memory != nullptr && memory->device >= 0) {
    std::string per_device;
    for (auto const& d : memory->devices)
      per_device += std::format("{}{{\"device\": {}, \"argument_bytes\": {}, \"output_bytes\": {}, \"temporary_bytes\": {}, "
                             "\"peak_bytes\": {}, \"peak_step\": {}}}",
                             per_device.empty() ? "" : ", ", d.device, d.argument_bytes, d.output_bytes, d.temporary_bytes,
                             d.peak_bytes, d.peak_step);
    s += std::format(",\n \"memory_analysis\": {{\"peak_bytes\": {}, \"device\": {}, \"peak_step\": {}, \"devices\": [{}]}}",
                     memory->peak_bytes, memory->device, memory->peak_step, per_device);
  }
  if (!devices.empty()) s += ",\n \"devices\": " + json_string(devices);
  return s + "}\n";
}

namespace {
void hash_text(HashSink& h, std::string_view t) {
  h.word(t.size());
  for (char c : t) h.word(static_cast<unsigned char>(c));
}

void hash_step(Plan const& plan, Step const& st, HashSink& h) {
  h.word(static_cast<std::uint64_t>(st.kind));
  h.word(static_cast<std::uint64_t>(st.collective));
  h.word(static_cast<std::uint64_t>(st.node));
  for (int o : st.operands) h.word(static_cast<std::uint64_t>(o));
  h.word(0xfff1);
  hash_text(h, st.label);
  if (st.to) sharding_signature(*st.to, plan.graph[static_cast<std::size_t>(st.node)].shape, h);
  if (st.from) sharding_signature(*st.from, plan.graph[static_cast<std::size_t>(st.node)].shape, h);
  for (auto a : st.axes) h.word(a);
  h.word(static_cast<std::uint64_t>(st.combine));
  h.word(std::bit_cast<std::uint64_t>(st.divide_by.value_or(-1.0)));
  h.word(static_cast<std::uint64_t>(st.result + 1));
  h.word(static_cast<std::uint64_t>(st.group));
  h.word(std::bit_cast<std::uint64_t>(st.bytes));
}
}  // namespace

std::uint64_t Plan::step_fingerprint(std::size_t k) const {
  HashSink h;
  hash_step(*this, steps[k], h);
  return h.h;
}

std::uint64_t Plan::fingerprint() const {
  HashSink h;
  auto text = [&](std::string_view t) { hash_text(h, t); };
  h.word(graph.size());
  for (auto const& n : graph) {
    h.word(static_cast<std::uint64_t>(n.kind));
    text(n.op);
    text(n.dtype);
    for (auto d : n.shape) h.word(static_cast<std::uint64_t>(d));
    h.word(0xfff0);
  }
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].out) sharding_signature(*nodes[i].out, graph[i].shape, h);
  for (auto const& st : steps) hash_step(*this, st, h);
  return h.h;
}

}  // namespace tessel::plan
