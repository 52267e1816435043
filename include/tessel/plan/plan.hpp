#pragma once
// A plan: for every node of the graph, the sharding its value has and what it costs to get it
// there; and the instructions the executor runs, in order, which explain prints.
#include <algorithm>
#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tessel/core/reduce_op.hpp"
#include "tessel/plan/collective.hpp"
#include "tessel/plan/cost_model.hpp"
#include "tessel/plan/graph.hpp"

namespace tessel::plan {

struct NodePlan {
  // The sharding the node's value finally has (after its collective and any reshard).
  std::optional<NamedSharding> out;
  // tensor and constraint nodes; reduce, dot, view and concatenate nodes after their own
  // sharding (after_collective): reshard to `out`.
  bool reshard = false;
  // reduce nodes: evaluated row by row inside the consuming kernel (no kernel of its own).
  bool row_fused = false;
  // reduce nodes: the sharding of the per-device results before the collective (the input's
  // tiling of the kept dimensions), the collective, and the sharding right after it. View and
  // concatenate nodes: after_collective is the sharding they produce.
  std::optional<NamedSharding> partial;
  std::optional<Collective> collective;  // all_reduce or reduce_scatter, if the partial results meet
  FixedVector<std::uint8_t, max_mesh_axes> collective_axes;
  std::optional<NamedSharding> after_collective;
  // tensor nodes (their reshard) and boundaries (reduce, dot, constraint, concatenate): an earlier
  // node computing the same value with the same plan, whose value this one reuses; -1 for none.
  int same_as = -1;
  // A boundary (dot, reduce, concatenate, constraint) whose value an earlier node of the same
  // value class already computes in another sharding: this node takes that node's value (its
  // `out`) and reshards it to its own `out` (when they differ) instead of computing it again.
  // The planner prices this against recomputing (Planner::assign); -1 for none.
  int reuses = -1;
  // ... and whether it takes that node's value before its result reshard (its after_collective,
  // when that is the sharding wanted here) rather than after: the other node then keeps_own, its
  // own value staying in its slot while its result reshard writes a slot of its own
  // (Plan::slots).
  bool reuses_own = false;
  bool keeps_own = false;

  friend constexpr bool operator==(NodePlan const&, NodePlan const&) = default;
};

// Two nodes planned to compute alike: the same plan, whether or not either reuses another value
// (every field but same_as; the cheap ones first: CSE asks this of every pair it considers).
constexpr bool computes_alike(NodePlan const& a, NodePlan const& b) {
  return a.reshard == b.reshard && a.row_fused == b.row_fused && a.collective == b.collective &&
         a.reuses == b.reuses && a.reuses_own == b.reuses_own && a.keeps_own == b.keeps_own &&
         a.collective_axes == b.collective_axes && a.out == b.out && a.partial == b.partial &&
         a.after_collective == b.after_collective;
}

// An instruction's kind. A collective (Step::collective says which) completes a reduction or is
// one step of a sharding change; `reshard` is a sharding change's step that moves no data between
// devices (a local slice) or moves it by plain copies (between different meshes). Kinds are
// generic: what an op needs beyond them it brings as steps its own kernel runs (Step::by_op).
enum class StepKind : std::uint8_t {
  reshard, kernel, collective,
  view,     // a reshape that reinterprets each device's block: no kernel, no data moved
  exchange  // an op's own step between the devices of groups (cumsum's carry down a sharded axis)
};

// The one table of step kinds' names (explain_json's "kind", static_jit's messages).
constexpr char const* name(StepKind kind) {
  constexpr char const* names[] = {"reshard", "kernel", "collective", "view", "exchange"};
  return names[static_cast<std::size_t>(kind)];
}

// One instruction of the executable plan. The executor (runtime/execute.hpp) runs the list in
// order; explain prints the same list; Kokkos Tools see each as a region named `label`, and the
// kernels inside carry the same name. Tools read the typed fields; `label` is made from them once
// (step_label), when the step is planned; explain's line (step_text) when a tool asks for it.
struct Step {
  StepKind kind;
  int node;            // graph node whose value the step produces (its value slot)
  int devices;         // devices running it
  double bytes;        // bytes per device the estimate takes (see plan/reshard.hpp for reshards)
  double estimate_us;  // cost model estimate (0 for kernels)
  // Its name: "fused", "reduce", "gemm", "cumsum", "all_reduce", "all_gather", "local_slice", "copy",
  // "cumsum_carry", ...: the label's first word, the trace's category, cost analysis's kind.
  char const* name = "";
  // Kernels: the ops it runs (a fused region's, in order; an op kernel's own op).
  std::vector<std::string> ops;
  // Steps of one node's op (not a region's): the user op it serves, as the label names it
  // ("dot_general#4", "result mul#3").
  std::string cause;
  std::string label;   // "tessel::fused[mul,add,tanh]", "tessel::all_reduce(mp)[dot_general#4]", ... (step_label)
  // Value slots read (see Plan::slot): a reshard, collective or view reads one, a GEMM two, a
  // concatenate each operand, a kernel every tensor its region reads.
  std::vector<int> operands;
  // A GEMM's operands read in place through a view (a slice or transpose of the slot's value,
  // which no step copies out): per operand, the view's graph node, or -1 (DotRules::materialize).
  std::array<int, 2> through_view{-1, -1};
  // reshards: the sharding this step produces; collectives: the sharding after them.
  std::optional<NamedSharding> to;
  // The steps of a sharding change: the sharding they read, and what the change is for ("operand",
  // "result", "constraint", "reuse"); empty for a node's own steps.
  std::optional<NamedSharding> from;
  char const* why = "";
  FixedVector<std::uint8_t, max_mesh_axes> axes;  // collectives and exchanges: the mesh axes of their groups
  int group = 1;                                  // ... and the devices in each group
  ReduceOp combine = ReduceOp::sum;               // all-reduce and reduce-scatter
  std::optional<double> divide_by;                // a mean's count (0 too: 0 / 0 is NaN), divided after its collective
  bool starts_reshard = false;                    // the first step of one sharding change
  // Run by its node's op kernel (NAME_kernel, which reads `kind` to tell its steps apart) rather than
  // by the executor: every kernel step of an op computed by `kernel` (expr/op_list.hpp), and an op's
  // own collective or exchange (a shard_map collective, argmax's all-reduce of values then
  // indices, cumsum's carry).
  bool by_op = false;
  Collective collective{};                        // collectives: which
  int result = -1;  // the value slot it writes when not its node's (the result reshard of a node that keeps_own)
};

// The label Kokkos Tools, traces and profiles name a step by: tessel::NAME(GROUPS)[WHAT], where
// GROUPS are the mesh axes of a step over groups ("all" between meshes) and WHAT is a region's ops
// or the user op the step serves.
constexpr std::string step_label(Step const& s, std::string const& groups) {
  std::string what = s.cause;
  if (what.empty())
    for (std::size_t k = 0; k < s.ops.size(); ++k) what += (k ? "," : "") + s.ops[k];
  return std::string("tessel::") + s.name + (groups.empty() ? "" : "(" + groups + ")") + "[" + what + "]";
}

// Explain's line for step `step` of `plan`, made from its fields: a sharding change's by the
// planner's reshard text, an op's own step by its rules (OpRules::explain). Never made while planning.
struct Plan;
std::string step_text(Plan const& plan, Step const& step);

// explain_json's "kind": the step kind's name, a collective's own.
constexpr char const* kind_name(Step const& s) { return s.kind == StepKind::collective ? id(s.collective) : name(s.kind); }

// How many of a list of steps (a Plan's, or a StaticPlan's instructions) are of a kind, or are
// collectives of a kind: what tests and static_asserts ask of a plan.
template <class S>
constexpr int count_steps(std::span<S const> steps, StepKind kind) {
  int n = 0;
  for (auto const& s : steps) n += s.kind == kind;
  return n;
}
template <class S>
constexpr int count_steps(std::span<S const> steps, Collective c) {
  int n = 0;
  for (auto const& s : steps) n += s.kind == StepKind::collective && s.collective == c;
  return n;
}

// The value slot a step writes.
constexpr int result_slot(Step const& s) { return s.result >= 0 ? s.result : s.node; }

// The sharding of what a step makes (as the rules that add each kind of step choose it); none for
// a step that makes no tensor.
constexpr std::optional<NamedSharding> made_sharding(Plan const& plan, Step const& step);

struct Plan {
  Graph graph;
  std::vector<NodePlan> nodes;
  std::vector<Step> steps;
  // For each node, the node whose value slot holds its value: itself, the node it shares a value
  // with (NodePlan::same_as), or a constraint's operand when nothing is resharded.
  std::vector<int> slot;
  // Value slots a run holds: one per node, and one more per node that keeps_own (its result
  // reshard's, at graph.size() + node). Set with `slot` (assign_slots).
  std::size_t slots = 0;
  // For each value slot, the step after which no later step reads it (last_reads): the executor
  // drops the slot's value there, so a temporary lives only as long as it is read. Empty: values
  // live until the plan ends.
  std::vector<int> last_read;
  // Which cost model priced it (explain's last line): "defaults", a calibrated file's, or a
  // static_jit program's own constant (plans made by the compiler never read a calibrated file).
  std::string priced_by = "defaults";

  // The node whose value a slot holds (a node's own slot, or its result reshard's: keeps_own).
  [[nodiscard]] constexpr std::size_t node_of_slot(int s) const {
    auto u = static_cast<std::size_t>(s);
    return u < graph.size() ? u : u - graph.size();
  }

  [[nodiscard]] constexpr int count(StepKind kind) const { return count_steps(std::span(steps), kind); }
  // Steps of one name ("cumsum_carry", "gemm", ...).
  [[nodiscard]] constexpr int count(std::string_view step_name) const {
    int n = 0;
    for (auto const& s : steps) n += step_name == s.name;
    return n;
  }
  [[nodiscard]] constexpr int count(Collective c) const { return count_steps(std::span(steps), c); }
  // Instructions, shapes, shardings and meshes, hashed: equal plans have equal fingerprints in
  // every process (no addresses or pointers enter it).
  [[nodiscard]] std::uint64_t fingerprint() const;
  // Step k's part of it (processes whose fingerprints differ find the first step that does).
  [[nodiscard]] std::uint64_t step_fingerprint(std::size_t k) const;
};

// For each value slot, the last step that reads it (-1: none does), and never for the result's
// slot (the step count). A step does not drop the slot it writes.
constexpr std::vector<int> last_reads(Plan const& plan) {
  std::vector<int> last(std::max(plan.slots, plan.graph.size()), -1);
  for (std::size_t k = 0; k < plan.steps.size(); ++k)
    for (int o : plan.steps[k].operands) last[static_cast<std::size_t>(o)] = static_cast<int>(k);
  if (!plan.slot.empty()) last[static_cast<std::size_t>(plan.slot.back())] = static_cast<int>(plan.steps.size());
  return last;
}

// Whether step k drops operand slot `o` after it runs (last_read).
constexpr bool drops_after(std::span<int const> last_read, Step const& step, std::size_t k, int o) {
  return !last_read.empty() && last_read[static_cast<std::size_t>(o)] == static_cast<int>(k) && o != result_slot(step);
}

constexpr std::optional<NamedSharding> made_sharding(Plan const& plan, Step const& step) {
  NodePlan const& p = plan.nodes[static_cast<std::size_t>(step.node)];
  switch (step.kind) {
    case StepKind::kernel: return p.partial ? p.partial : p.after_collective ? p.after_collective : p.out;
    case StepKind::view: return p.after_collective ? p.after_collective : p.out;
    default: return step.to ? step.to : p.out;
  }
}

// The node a step serves, and a node's plan.
constexpr GraphNode const& node_of(Plan const& plan, Step const& step) { return plan.graph[static_cast<std::size_t>(step.node)]; }
constexpr NodePlan const& plan_of(Plan const& plan, int node) { return plan.nodes[static_cast<std::size_t>(node)]; }

// The bytes of one element of what a step makes: a kernel's partial values and the all-reduce or
// reduce-scatter completing them have the node's partial_bytes (a 16-bit dot's float32 sums, rounded
// once after the collective), every other value its dtype's.
constexpr std::size_t made_element_bytes(Plan const& plan, Step const& step) {
  GraphNode const& n = plan.graph[static_cast<std::size_t>(step.node)];
  NodePlan const& p = plan.nodes[static_cast<std::size_t>(step.node)];
  bool const reduces = step.kind == StepKind::collective &&
                       (step.collective == Collective::all_reduce || step.collective == Collective::reduce_scatter);
  return p.collective && (step.kind == StepKind::kernel || reduces) ? partial_bytes(n) : n.dtype_bytes;
}

// Sharding propagation (GSPMD-style), collective choice and fusion boundaries for a graph whose
// root must come out with `requested` (or with whatever propagation gives, when absent).
Plan make_plan(Graph graph, std::optional<NamedSharding> const& requested, CostModel const& model);

// The plan as text: one line per instruction (kernel, collective, reshard, view), then its costs,
// with `memory` its memory analysis (plan/memory_analysis.hpp), and with `devices` where the
// devices run (the runtime's placement, "0..7 on GPU 0"; plans do not depend on it).
struct MemoryAnalysis;
std::string to_string(Plan const& plan, MemoryAnalysis const* memory = nullptr, std::string_view devices = {});
// The plan as JSON: {"fingerprint", "steps": [{"kind", "label", "node", "operands", "devices",
// "bytes", "estimate_us", cost fields (plan/cost_analysis.hpp), "text"}, ...], "cost_analysis"}.
// With `memory`, its memory analysis too ("memory_analysis": the peak, its device and step, and
// each device's arguments, output, temporaries and peak; plan/memory_analysis.hpp).
// With `devices`, the placement ("devices").
std::string to_json(Plan const& plan, MemoryAnalysis const* memory = nullptr, std::string_view devices = {});

}  // namespace tessel::plan
