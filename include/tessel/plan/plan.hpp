#pragma once
// A plan: for every node of the graph, the sharding its value has and what it costs to get it
// there; and the instructions the executor runs, in order, which explain prints.
#include <optional>
#include <string>
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
// devices (a local slice) or moves it by plain copies (between different meshes).
enum class StepKind : std::uint8_t {
  reshard, kernel, collective,
  view,       // a reshape that reinterprets each device's block: no kernel, no data moved
  scan_carry  // a scan over a sharded axis: each block combines the last values of the one before it
};

struct Plan;
struct Step;
}  // namespace tessel::plan
namespace tessel::detail {
struct RunState;  // runtime/execute.hpp: the values a run has made so far
}
namespace tessel::plan {
// What a kernel step runs: for a region (its node's kind is computed "region", expr/op_list.hpp)
// a kernel instantiated from the region's expression type when the plan is first run (the only
// typed part of running a plan); otherwise its node kind's untyped kernel (NAME_kernel).
using KernelFn = void (*)(Plan const& plan, Step const& step, tessel::detail::RunState& state);

// One instruction of the executable plan. The executor (runtime/execute.hpp) runs the list in
// order; explain prints the same list; Kokkos Tools see each as a region named `label`, and the
// kernels inside carry the same name.
struct Step {
  StepKind kind;
  int node;            // graph node whose value the step produces (its value slot)
  int devices;         // devices running it
  double bytes;        // bytes per device the estimate takes (see plan/reshard.hpp for reshards)
  double estimate_us;  // cost model estimate (0 for kernels)
  std::string text;    // one line of explain
  std::string label;   // "tessel::fused[mul,add,tanh]", "tessel::all_reduce(mp)[dot_general#4]", ...
  // Value slots read (see Plan::slot): a reshard, collective or view reads one, a GEMM two, a
  // concatenate each operand, a kernel every tensor its region reads.
  std::vector<int> operands;
  // reshards: the sharding this step produces; collectives: the sharding after them.
  std::optional<NamedSharding> to;
  FixedVector<std::uint8_t, max_mesh_axes> axes;  // collectives and scan carries: the mesh axes of their groups
  ReduceOp combine = ReduceOp::sum;               // all-reduce and reduce-scatter
  std::optional<double> divide_by;                // a mean's count (0 too: 0 / 0 is NaN), divided after its collective
  bool starts_reshard = false;                    // the first step of one sharding change
  bool with_index = false;                        // an argmax's all-reduce: values, then indices
  Collective collective{};                        // collectives: which
  KernelFn run = nullptr;                         // kernels: attached on the plan's first run
  int result = -1;  // the value slot it writes when not its node's (the result reshard of a node that keeps_own)
};

// The value slot a step writes.
constexpr int result_slot(Step const& s) { return s.result >= 0 ? s.result : s.node; }

struct Plan {
  Graph graph;
  std::vector<NodePlan> nodes;
  std::vector<Step> steps;
  // For each node, the node whose value slot holds its value: itself, the node it shares a value
  // with (NodePlan::same_as), or a constraint's operand when nothing is resharded.
  std::vector<int> slot;
  // Whether the kernel steps have their kernels (Step::run): attached on the first eval of the
  // plan, not by explain or plan_of, so an expression only explained instantiates no kernel.
  bool kernels_attached = false;
  // Value slots a run holds: one per node, and one more per node that keeps_own (its result
  // reshard's, at graph.size() + node). Set with `slot` (assign_slots).
  std::size_t slots = 0;
  // Which cost model priced it (explain's last line): "defaults", a calibrated file's, or a
  // static_jit program's own constant (plans made by the compiler never read a calibrated file).
  std::string priced_by = "defaults";

  // The node whose value a slot holds (a node's own slot, or its result reshard's: keeps_own).
  [[nodiscard]] constexpr std::size_t node_of_slot(int s) const {
    auto u = static_cast<std::size_t>(s);
    return u < graph.size() ? u : u - graph.size();
  }

  [[nodiscard]] constexpr int count(StepKind kind) const {
    int n = 0;
    for (auto const& s : steps) n += s.kind == kind;
    return n;
  }
  [[nodiscard]] constexpr int count(Collective c) const {
    int n = 0;
    for (auto const& s : steps) n += s.kind == StepKind::collective && s.collective == c;
    return n;
  }
  // Instructions, shapes, shardings and meshes, hashed: equal plans have equal fingerprints in
  // every process (no addresses or pointers enter it).
  [[nodiscard]] std::uint64_t fingerprint() const;
  // Step k's part of it (processes whose fingerprints differ find the first step that does).
  [[nodiscard]] std::uint64_t step_fingerprint(std::size_t k) const;
};

// Sharding propagation (GSPMD-style), collective choice and fusion boundaries for a graph whose
// root must come out with `requested` (or with whatever propagation gives, when absent).
Plan make_plan(Graph graph, std::optional<NamedSharding> const& requested, CostModel const& model);

// The plan as text: one line per instruction (kernel, collective, reshard, view), then its costs.
std::string to_string(Plan const& plan);
// The plan as JSON: {"fingerprint", "steps": [{"kind", "label", "node", "operands", "devices",
// "bytes", "estimate_us", cost fields (tools/cost_analysis.hpp), "text"}, ...], "cost_analysis"}.
std::string to_json(Plan const& plan);

}  // namespace tessel::plan
