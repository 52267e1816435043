// cost_analysis: per instruction and device, flops, bytes read and written, the model's estimate
// and a collective's device groups. The shardings each step reads are followed through the plan
// the way the executor fills its value slots: tensors come with theirs, and each step leaves its
// result's sharding in its node's slot.
#include "tessel/plan/cost_analysis.hpp"

#include <algorithm>
#include <format>
#include <optional>

#include "tessel/plan/cost_model.hpp"
#include "tessel/plan/passes.hpp"
#include "tessel/plan/viewed_operand.hpp"
#include "tessel/core/device_groups.hpp"

namespace tessel::plan {

std::vector<std::vector<int>> step_groups(Step const& step) {
  bool grouped = step.kind == StepKind::collective || step.kind == StepKind::exchange;
  if (!grouped || !step.to) return {};
  Mesh const& mesh = step.to->mesh();
  std::vector<std::vector<int>> groups;
  if (step.axes.empty()) {  // a permute between meshes: all devices at once
    groups.emplace_back(mesh.device_ids().begin(), mesh.device_ids().end());
    return groups;
  }
  for (auto const& positions : device_groups(mesh.axes(), step.axes)) {
    auto& ids = groups.emplace_back();
    for (int pos : positions) ids.push_back(mesh.device_id(pos));
  }
  return groups;
}

std::vector<std::string> step_axes(Step const& step) {
  std::vector<std::string> names;
  if (!step.to) return names;
  for (auto a : step.axes) names.emplace_back(step.to->mesh().axes().name(a).view());
  return names;
}

std::vector<InstructionCost> cost_analysis(Plan const& plan) {
  Graph const& g = plan.graph;
  // The sharding each value slot holds at this point of the run.
  std::vector<std::optional<NamedSharding>> held(std::max(plan.slots, g.size()));
  for (std::size_t i = 0; i < g.size(); ++i)
    if (computed(g[i].kind) == Computed::leaf && g[i].sharding && !held[static_cast<std::size_t>(plan.slot[i])])
      held[static_cast<std::size_t>(plan.slot[i])] = g[i].sharding;

  std::vector<InstructionCost> costs;
  costs.reserve(plan.steps.size());
  for (Step const& step : plan.steps) {
    InstructionCost c;
    c.kind = step.name;
    c.estimate_us = step.estimate_us;
    GraphNode const& n = g[static_cast<std::size_t>(step.node)];
    StepBlocks blocks;
    for (std::size_t k = 0; k < step.operands.size(); ++k) {
      int const o = step.operands[k];
      auto const& s = held[static_cast<std::size_t>(o)];
      if (!s) continue;  // a scalar
      std::size_t from = plan.node_of_slot(o);
      // A GEMM reading a view in place reads the view's blocks.
      int const view = viewed_operand(step, k);
      if (view >= 0) from = static_cast<std::size_t>(view);
      GraphNode const& read = g[from];
      NamedSharding const& sharding = view >= 0 ? view_sharding(plan, view) : *s;
      Shape const& block = blocks.reads.emplace_back(sharding.block_shape(read.shape));
      // A collective completing its node's partial values reads them as they were made.
      std::size_t const element = step.kind == StepKind::collective && from == static_cast<std::size_t>(step.node)
                                      ? made_element_bytes(plan, step)
                                      : read.dtype_bytes;
      c.bytes_read += static_cast<double>(block.num_elements()) * static_cast<double>(element);
    }
    auto made = made_sharding(plan, step);
    if (made) {
      blocks.made = made->block_shape(n.shape);
      // A view makes no data: the same blocks, read as another shape.
      if (step.kind != StepKind::view)
        c.bytes_written = static_cast<double>(blocks.made->num_elements()) * static_cast<double>(made_element_bytes(plan, step));
      else c.bytes_read = 0;
      if (!made->layout().even(n.shape)) c.blocks = block_shapes_text(*made, n.shape);
      c.devices.assign(made->mesh().device_ids().begin(), made->mesh().device_ids().end());
    }
    if (step.kind == StepKind::kernel) c.ops = step.ops;
    StepWork const work = step_work(plan, step, blocks);
    if (work.updates_in_place && !blocks.reads.empty()) {
      c.bytes_read -= static_cast<double>(blocks.reads.front().num_elements()) * static_cast<double>(n.dtype_bytes);
      c.bytes_written = static_cast<double>(*work.updates_in_place) * static_cast<double>(n.dtype_bytes);
    }
    if (work.reads_of_first && !blocks.reads.empty()) {
      std::int64_t const whole = blocks.reads.front().num_elements();
      c.bytes_read -= static_cast<double>(whole - std::min(whole, *work.reads_of_first)) * static_cast<double>(n.dtype_bytes);
    }
    c.flops = work.flops;
    if (work.gemm) c.batch = work.gemm->batch, c.m = work.gemm->m, c.n = work.gemm->n, c.k = work.gemm->k;
    // The planner prices communication only; a kernel's estimate is the model's roofline.
    if (step.kind == StepKind::kernel) c.estimate_us += cost_model().kernel_us(c.flops, c.bytes_read + c.bytes_written);
    c.groups = step_groups(step);
    if (!c.groups.empty()) c.mesh_axes = step_axes(step);
    if (made) held[static_cast<std::size_t>(result_slot(step))] = made;
    costs.push_back(std::move(c));
  }
  return costs;
}

// {{0,1},{2,3}} (written out, not with range-v3: nvcc's host pass cannot compile range-v3).
std::string replica_groups_text(std::vector<std::vector<int>> const& groups) {
  std::string text = "{";
  for (std::size_t g = 0; g < groups.size(); ++g) {
    text += g ? ",{" : "{";
    for (std::size_t k = 0; k < groups[g].size(); ++k) text += (k ? "," : "") + std::to_string(groups[g][k]);
    text += "}";
  }
  return text + "}";
}

std::string cost_analysis_text(Plan const& plan) {
  if (plan.steps.empty()) return {};
  auto costs = cost_analysis(plan);
  std::string s = "cost analysis, per device:\n";
  double flops = 0, read = 0, written = 0, us = 0;
  for (std::size_t k = 0; k < costs.size(); ++k) {
    auto const& c = costs[k];
    std::string gemm = c.m > 0  // a GEMM's problem, as its op declared it
                           ? std::format(" (m {}, n {}, k {}{})", c.m, c.n, c.k,
                                         c.batch > 1 ? std::format(", batch {}", c.batch) : std::string())
                           : std::string();
    std::string groups = c.groups.empty() ? std::string() : ", replica_groups=" + replica_groups_text(c.groups);
    std::string blocks = c.blocks.empty() ? std::string() : ", uneven blocks " + c.blocks;
    s += std::format("  #{} {}: {:.0f} flops{}, {:.0f} bytes read, {:.0f} bytes written, est {:.1f} us{}{}\n", k,
                     plan.steps[k].label, c.flops, gemm, c.bytes_read, c.bytes_written, c.estimate_us, blocks, groups);
    flops += c.flops;
    read += c.bytes_read;
    written += c.bytes_written;
    us += c.estimate_us;
  }
  s += std::format("  total: {:.0f} flops, {:.0f} bytes read, {:.0f} bytes written, est {:.1f} us\n", flops, read,
                   written, us);
  return s;
}

}  // namespace tessel::plan
