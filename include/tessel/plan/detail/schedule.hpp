#pragma once
// The instruction list: the planned graph walked from the root, boundaries made before the
// regions that read them, each kernel, collective, reshard and view as one Step that says what it
// reads and what it makes (the fields explain's line is made from, plan::step_text). The executor
// runs exactly this list. What each op contributes comes from its rules (plan/detail/rules/); this
// file knows steps, not ops.
#include "tessel/plan/detail/planner.hpp"

namespace tessel::plan {


// A sharding change's step's name: its collective's, or how it moves data without one.
constexpr char const* step_name(ReshardStep const& s) { return s.collective ? id(*s.collective) : s.copy ? "copy" : "local_slice"; }


constexpr Step& Scheduler::add(Collective c, int i, int devices, StepName named, std::vector<int> operands) {
  Step& s = add(StepKind::collective, i, devices, std::move(named), std::move(operands));
  s.collective = c;
  return s;
}

constexpr Step& Scheduler::add(StepKind kind, int i, int devices, StepName named, std::vector<int> operands) {
  Step s{};
  s.kind = kind;
  s.node = i;
  s.devices = devices;
  s.name = named.name;
  s.cause = std::move(named.cause);
  s.ops = std::move(named.ops);
  // An op computed by a kernel of its own runs all its kernel steps and its exchanges.
  bool op_kernel = computed(node(i).kind) == Computed::kernel;
  s.by_op = kind == StepKind::exchange || (kind == StepKind::kernel && op_kernel);
  if (kind == StepKind::kernel && op_kernel && s.ops.empty()) s.ops.emplace_back(node(i).op);
  if (!std::is_constant_evaluated()) s.label = step_label(s, named.groups);
  s.operands = std::move(operands);
  plan.steps.push_back(std::move(s));
  return plan.steps.back();
}

constexpr void Scheduler::reshard_steps(int i, int read, NamedSharding const& from, NamedSharding const& to, char const* why,
                              int write) {
  GraphNode const& n = node(i);
  std::string cause = std::is_constant_evaluated() ? std::string() : why + (" " + user_op(i));
  auto parts = decompose(n.shape, n.dtype_bytes, from, to);
  if (parts.empty()) {  // every device keeps its block; only the mesh's description changes
    Step& s = add(StepKind::reshard, i, to.mesh().num_devices(), {"reshard", cause}, {read});
    s.from = from;
    s.to = to;
    s.why = why;
    s.result = write;
    s.starts_reshard = true;
    return;
  }
  bool first = true;
  for (auto const& part : parts) {
    StepName named{step_name(part), cause, groups_label(part.to.mesh(), part.axes)};
    std::vector<int> reads{first ? read : write >= 0 ? write : i};
    Step& s = part.collective ? add(*part.collective, i, to.mesh().num_devices(), std::move(named), reads)
                              : add(StepKind::reshard, i, to.mesh().num_devices(), std::move(named), reads);
    s.result = write;
    s.bytes = part.bytes;
    s.estimate_us = model.reshard_us(part);
    s.from = part.from;
    s.to = part.to;
    s.why = why;
    s.axes = part.axes;  // the groups a trace and cost_analysis name (empty between meshes)
    s.group = part.group;
    s.starts_reshard = first;
    first = false;
  }
}

constexpr void Scheduler::region(int i, Region& r) { rules_for(node(i).kind).region(*this, i, r); }

constexpr void Scheduler::materialize(int i) {
  NodePlan const& p = at(i);
  if (p.same_as >= 0) return;  // an earlier step made this value
  if (scheduled.empty()) scheduled.resize(plan.graph.size());
  if (scheduled[static_cast<std::size_t>(i)]) return;
  scheduled[static_cast<std::size_t>(i)] = 1;
  if (p.reuses >= 0) {  // another node's value, resharded to this one's sharding when they differ
    materialize(p.reuses);
    NodePlan const& from = at(p.reuses);
    if (p.reshard)
      reshard_steps(i, p.reuses_own ? p.reuses : slot(p.reuses), p.reuses_own ? *from.after_collective : *from.out, *p.out,
                    "reuse");
    return;
  }
  rules_for(node(i).kind).materialize(*this, i);
}

constexpr void Scheduler::operand(int c) {
  Region ignored;
  if (node(c).kind == NodeKind::tensor) region(c, ignored);
  else materialize(c);
}

constexpr void Scheduler::kernel_step(int i, Region const& r, char const* name) {
  NodePlan const& p = at(i);
  auto const& s = p.partial ? *p.partial : p.after_collective ? *p.after_collective : *p.out;
  add(StepKind::kernel, i, s.mesh().num_devices(), {name, {}, {}, r.ops}, r.reads);
}

constexpr void Scheduler::collective_steps(int i) {
  GraphNode const& n = node(i);
  NodePlan const& p = at(i);
  if (!p.collective) return;
  // The combining op: the graph's (a dot's partial products and a mean's partial sums are summed).
  ReduceOp op = n.combine;
  double bytes = static_cast<double>(p.partial->block_shape(n.shape).num_elements()) * static_cast<double>(partial_bytes(n));
  int group = group_size(p.partial->mesh().axes(), p.collective_axes);
  Mesh const& mesh = p.partial->mesh();
  bool all_reduce = p.collective == Collective::all_reduce;
  CostModel const priced = std::is_constant_evaluated() ? model : model.over(mesh, p.collective_axes);  // MPI's entries when a group spans processes
  double us = all_reduce ? priced.all_reduce_us(bytes, group) : priced.reduce_scatter_us(bytes, group);
  Step& s = add(*p.collective, i, mesh.num_devices(), {id(*p.collective), user_op(i), groups_label(mesh, p.collective_axes)}, {i});
  s.bytes = bytes;
  s.estimate_us = us;
  s.to = *p.after_collective;
  s.axes = p.collective_axes;
  s.group = group;
  s.combine = op;
  if (n.divides) {
    double count = 1;
    Shape const& in = node(n.children[0]).shape;
    for (auto a : n.axes) count *= static_cast<double>(in[a]);
    s.divide_by = count;
  }
}

constexpr void assign_slots(Plan& plan) {
  Graph const& g = plan.graph;
  plan.slot.assign(g.size(), -1);
  plan.slots = g.size();
  for (auto const& p : plan.nodes)
    if (p.keeps_own) plan.slots = 2 * g.size();
  // A node reads the slot of the node it shares with (an earlier one by CSE, an earlier or later
  // one it reuses without a reshard, a constraint's operand), resolved through chains.
  auto resolve = [&](auto& self, std::size_t i) -> int {
    if (plan.slot[i] >= 0) return plan.slot[i];
    NodePlan const& p = plan.nodes[i];
    int s = static_cast<int>(i);
    if (p.same_as >= 0) s = self(self, static_cast<std::size_t>(p.same_as));
    else if (p.reuses >= 0 && !p.reshard) s = p.reuses_own ? p.reuses : self(self, static_cast<std::size_t>(p.reuses));
    else if (p.keeps_own) s = static_cast<int>(g.size() + i);
    else if (g[i].kind == NodeKind::constraint && !p.reshard && p.reuses < 0)
      s = self(self, static_cast<std::size_t>(g[i].children[0]));
    return plan.slot[i] = s;
  };
  for (std::size_t i = 0; i < g.size(); ++i) resolve(resolve, i);
}

constexpr void schedule(Plan& plan, CostModel const& model) {
  assign_slots(plan);
  if (!plan.graph.empty()) Scheduler{plan, model}.materialize(static_cast<int>(plan.graph.size()) - 1);
}

}  // namespace tessel::plan
