#pragma once
// The planner's machinery (installed for static_jit, which runs it in a constant expression):
// sharding propagation (Planner, plan/detail/propagate.hpp), the instruction schedule (Scheduler,
// plan/detail/schedule.hpp), and the rules of each family of ops (OpRules,
// plan/detail/rules/<family>.hpp, chosen by rules_for in plan/detail/rules.hpp). Propagation and
// scheduling ask the node's rules what an op does (Shardy's op sharding rule registry, XLA's per-op
// SPMD handlers); a few tests of a node's kind remain in them (propagate.hpp: which results can be
// reused, row fusion, shard_map's checks; schedule.hpp: leaves and constraints).
#include <format>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/plan/passes.hpp"
#include "tessel/plan/step_work.hpp"
#include "tessel/plan/view_rules.hpp"

namespace tessel::plan {

using AxisList = ShardLayout::AxisList;

// XLA's CSE on the planned graph: sets NodePlan::same_as where a node computes what an earlier one
// computes, the same way.
constexpr void share_common_values(Graph const& g, std::vector<NodePlan>& plans);
// The value class of each node: the first node (by index) computing the same value (same op,
// shapes and attributes, the same tensors by GraphNode::alias, equal scalars, operands of the same
// classes), whatever their plans. CSE shares within a class; the planner reuses across shardings.
constexpr std::vector<int> value_classes(Graph const& g);

// Each node's value slot (Plan::slot) from its plan: its own, or the one it shares.
constexpr void assign_slots(Plan& plan);

// Orders the planned graph into instructions (Plan::steps) and value slots (Plan::slot).
constexpr void schedule(Plan& plan, CostModel const& model);


// The tiling of `s` (for a value of shape `from`) seen from an operand of shape `to` broadcast
// into it (dimensions aligned from the right; broadcast dimensions are not split).
constexpr NamedSharding project(NamedSharding const& s, Shape const& from, Shape const& to);

struct Planner {
  Graph const& g;
  CostModel const& model;
  std::vector<std::optional<NamedSharding>> natural;
  std::vector<NodePlan> plans;

  [[nodiscard]] constexpr GraphNode const& node(int i) const { return g[static_cast<std::size_t>(i)]; }
  // The first node of i's subtree (post-order: the subtree is the index range [first_of(i), i]).
  [[nodiscard]] constexpr int first_of(int i) const {
    while (!node(i).children.empty()) i = node(i).children.front();
    return i;
  }
  // Node i's natural sharding; for a value nothing places (an iota, or ops over iotas and
  // scalars only), device 0's, as for an uncommitted array.
  [[nodiscard]] constexpr NamedSharding natural_of(int i) const {
    auto const& s = natural[static_cast<std::size_t>(i)];
    return s ? *s : unplaced();
  }
  static constexpr NamedSharding unplaced();
  constexpr NodePlan& plan(int i) { return plans[static_cast<std::size_t>(i)]; }

  // Propagation from the leaves (each node's natural sharding), then the plan of every node from
  // the root's requested sharding down.
  constexpr void forward();
  constexpr void assign(int i, std::optional<NamedSharding> const& requested);

  // What a reduction's per-device results look like: the input's tiling on the kept dimensions
  // (reduced dimensions dropped, or unsplit when kept), and the mesh axes left partial.
  [[nodiscard]] constexpr std::pair<NamedSharding, AxisList> reduced_tiling(int i, NamedSharding const& input) const;

  // A reduction's input tiling refined toward the requested output: each kept dimension whose
  // axes are a prefix of the request's (on the same result dimension) takes the request's further
  // axes that the input does not use elsewhere. Slicing the input locally before reducing makes
  // the partial results, and so their all-reduce, smaller (or turns it into the reduce-scatter
  // the request wants), as XLA's partitioner does.
  [[nodiscard]] constexpr NamedSharding refine_kept(int i, NamedSharding const& input, NamedSharding const& req) const;

  // What bringing `child` to `target` costs by the cost model (0 for scalars).
  [[nodiscard]] constexpr double reshard_cost(int child, NamedSharding const& target) const;

  // The operand tiling a node adopts: among the candidates (one per operand, from
  // `candidate_of(operand)`), the one with the least total cost to bring every operand to it (seen
  // from that operand's shape). Ties go to the earlier operand, so the choice is deterministic.
  // Operands on a single device (uncommitted) only propose when nothing else does; none when no
  // operand has a sharding (iotas and scalars: the node then takes its consumer's).
  template <class CandidateOf>
  constexpr std::optional<NamedSharding> cheapest_tiling(int i, CandidateOf const& candidate_of) const {
    GraphNode const& n = node(i);
    std::optional<NamedSharding> best;
    double best_cost = 0;
    bool any_multi = false;
    for (int c : n.children)
      if (natural[static_cast<std::size_t>(c)] && natural[static_cast<std::size_t>(c)]->mesh().num_devices() > 1)
        any_multi = true;
    for (int c : n.children) {
      auto const& s = natural[static_cast<std::size_t>(c)];
      if (!s || (any_multi && s->mesh().num_devices() == 1)) continue;
      NamedSharding candidate = candidate_of(c, *s);
      double cost = operands_cost(i, candidate);
      if (!best || cost < best_cost) {
        best = candidate;
        best_cost = cost;
      }
    }
    return best;
  }

  // What bringing every operand of node i to `candidate` (seen from each operand's shape) costs.
  [[nodiscard]] constexpr double operands_cost(int i, NamedSharding const& candidate) const {
    GraphNode const& n = node(i);
    double cost = 0;
    for (int o : n.children) cost += reshard_cost(o, project(candidate, n.shape, node(o).shape));
    return cost;
  }

  // GSPMD's elementwise rule across broadcasts: each dimension of node i takes the mesh axes of
  // the operands that have it (not broadcast into it), so x[8,16] on P('a') plus y[16] on P('b')
  // is P('a', 'b') (x's replicated columns sliced locally, nothing gathered). Where operands
  // disagree on a dimension the first one's axes stay (the others are resharded), one whose axes
  // extend them refines them, and an axis already used by an earlier dimension ends an operand's
  // contribution (x[8,16] on P('a') plus y[16] on P(('b', 'a')) is P('a', 'b')). None when no
  // operand is on more than one device.
  [[nodiscard]] constexpr std::optional<NamedSharding> merged_tiling(int i) const;

  // A reduce over the last axis, with keepdims, whose input has the consumer's shape and whose
  // reduced axis the consumer does not split, runs inside the consumer's kernel, one row at a time.
  [[nodiscard]] constexpr bool row_fusable(int r, NamedSharding const& consumer, Shape const& consumer_shape) const;

  // The region whose rows an elementwise node's value is computed per row of: a node of the
  // region's row shape (its shape with a last dimension of 1: rsqrt(var + eps) in a LayerNorm)
  // joins the region's kernel like any elementwise node, so the reductions under it row-fuse
  // against the region's shape and sharding rather than its own, and each row's value is computed
  // once per row. Set by the elementwise parent before it assigns the node.
  struct RowRegion {
    Shape shape;
    NamedSharding sharding;
  };
  std::vector<std::optional<RowRegion>> row_region;

  // One value per (value, sharding): each node's value class (value_classes), and a scratch copy
  // of the plan in which a subtree's steps are priced (subtree_us).
  std::vector<int> value_class{};
  std::optional<Plan> scratch{};
  // Elementwise nodes a parent reads as a tensor made apart (a GEMM's operands), not fused into
  // its own kernel: their values exist in a slot, so they can be reused like a boundary's (the
  // layer_norm under a transformer's Q, K and V projections is computed once). Set by the parent's
  // rules before they assign the node.
  std::vector<char> made_apart{};
  // Can node i take an earlier node's value of its class instead of computing it (a boundary
  // whose value is a tensor of its own: dot, reduce that is not row-fused, concatenate,
  // constraint; or an elementwise node made apart)?
  [[nodiscard]] constexpr bool reusable(int i) const;
  // What the steps of node i's subtree cost by the model (its collectives and reshards), as the
  // scheduler would make them from the plans assigned so far.
  [[nodiscard]] constexpr double subtree_us(int i);
  // Is node c, an operand of a node of shape `shape`, a per-row value of the region (shape,
  // sharding)? Elementwise, of the row shape, in a region whose rows are not split.
  [[nodiscard]] constexpr bool per_row_value(int c, NamedSharding const& sharding, Shape const& shape) const;

  // Can a reduce-scatter produce `want` from partial results tiled as `partial` with `axes` left
  // to reduce? Yes when `want` extends the partial tiling with exactly those axes.
  static constexpr bool scatter_reaches(NamedSharding const& partial, AxisList const& axes, NamedSharding const& want,
                              std::size_t rank);

  // How partial results (tiled as `partial`, still to be combined over `axes`) become the node's
  // value: nothing, an all-reduce, or a reduce-scatter when that lands right on the request.
  static constexpr void complete_partial(NodePlan& p, NamedSharding const& partial, AxisList const& axes,
                               std::optional<NamedSharding> const& req, std::size_t rank);

  // A node whose own sharding is `own`: its plan's out is the request (or `own`), resharded after.
  static constexpr void settle(NodePlan& p, NamedSharding const& own, std::optional<NamedSharding> const& req) {
    p.out = req ? *req : own;
    p.reshard = !(*p.out == own);
  }
};

// What a kernel rooted somewhere reads and computes: the ops it fuses (in evaluation order) and
// the value slots of the tensors it reads.
struct Region {
  std::vector<std::string> ops;
  std::vector<int> reads;
};

// How a step is named (Step::name, ops, cause) and the groups its label names ("mp"; none when empty).
struct StepName {
  char const* name;
  std::string cause{};
  std::string groups{};
  std::vector<std::string> ops{};
};

struct Scheduler {
  Plan& plan;
  CostModel const& model;
  // Nodes whose steps are made (a value another node reuses is made once, by whichever asks
  // first); sized on first use. The planner pre-marks nodes outside a subtree it prices.
  std::vector<char> scheduled{};

  [[nodiscard]] constexpr GraphNode const& node(int i) const { return plan.graph[static_cast<std::size_t>(i)]; }
  [[nodiscard]] constexpr NodePlan const& at(int i) const { return plan.nodes[static_cast<std::size_t>(i)]; }
  [[nodiscard]] constexpr int slot(int i) const { return plan.slot[static_cast<std::size_t>(i)]; }
  // "dot_general#4": the user op a step comes from. Labels are made only when a plan is made at
  // run time: std::format is not constexpr, and a plan made by the compiler (static_jit,
  // plan/static_plan.hpp) holds none until it is bound to devices, when its steps are made again.
  [[nodiscard]] constexpr std::string user_op(int i) const {
    if (std::is_constant_evaluated()) return {};
    return std::format("{}#{}", node(i).op, i);
  }
  // The mesh axes of a step over groups, as its label names them ("dp,mp"; "all" for none).
  [[nodiscard]] static constexpr std::string groups_label(Mesh const& mesh, AxisList const& axes) {
    if (std::is_constant_evaluated()) return {};  // labels are made at run time only
    return axes.empty() ? std::string("all") : axes_label(mesh, axes);
  }

  // Node i as part of a region (its rules' region), and node i's value made by steps of its own
  // (its rules' materialize; nothing when an earlier step made the same value).
  constexpr void region(int i, Region& r);
  constexpr void materialize(int i);
  // A boundary inside a region: made apart, then read as a tensor.
  constexpr void boundary(int i, Region& r) {
    materialize(i);
    r.reads.push_back(slot(i));
  }
  // A boundary's operand: a tensor (resharded if planned) or a value made by its own steps.
  constexpr void operand(int c);

  // A step of node i: its kind, its name and operands. Its label is made from them; explain's line,
  // when a tool asks, from the fields the caller fills in (OpRules::explain).
  constexpr Step& add(StepKind kind, int i, int devices, StepName named, std::vector<int> operands);
  // A collective step (StepKind::collective).
  constexpr Step& add(Collective c, int i, int devices, StepName named, std::vector<int> operands);
  // One step per collective the sharding change of node i amounts to (plan/reshard.hpp); the first
  // reads slot `read`, the others what the one before wrote: slot `write`, or i's when -1.
  constexpr void reshard_steps(int i, int read, NamedSharding const& from, NamedSharding const& to, char const* why,
                     int write = -1);
  // The fused kernel of the region rooted at i.
  constexpr void fused_kernel(int i) {
    Region r;
    region(i, r);
    kernel_step(i, r, "fused");
  }
  // The kernel step of a region rooted at i.
  constexpr void kernel_step(int i, Region const& r, char const* name);
  // The all-reduce or reduce-scatter completing node i's partial results, if its plan has one.
  constexpr void collective_steps(int i);
  // After a node's own steps: the reshard of its result to its plan's out, if planned.
  constexpr void result_reshard(int i) {
    NodePlan const& p = at(i);
    if (p.reshard)
      reshard_steps(i, i, *p.after_collective, *p.out, "result",
                    p.keeps_own ? static_cast<int>(plan.graph.size()) + i : -1);
  }
};

// The rules of one family of ops. A family that lacks one does not compile (the methods are pure).
class OpRules {
 public:
  constexpr virtual ~OpRules() = default;
  // The sharding the node's value has by propagation from its operands' (none for scalars).
  [[nodiscard]] constexpr virtual std::optional<NamedSharding> natural(Planner const& p, int i) const = 0;
  // Fixes the node's plan for a requested output (or its natural sharding) and assigns what its
  // operands must produce.
  constexpr virtual void assign(Planner& p, int i, std::optional<NamedSharding> const& requested) const = 0;
  // Its part in a fused region a consumer's kernel runs.
  constexpr virtual void region(Scheduler& s, int i, Region& r) const = 0;
  // The steps that make its value on their own.
  constexpr virtual void materialize(Scheduler& s, int i) const = 0;
  // What one device computes in a kernel step of the node (its flops; a GEMM's problem), from the
  // blocks the step reads and makes: what cost_analysis, traces and profiles count.
  [[nodiscard]] constexpr virtual StepWork work(GraphNode const& n, Step const& step, StepBlocks const& b) const = 0;
  // Explain's line for a step of the node's own (the kernels, collectives and exchanges its
  // materialize adds; sharding changes are the planner's), from the step's and the plan's fields:
  // made when a tool asks (plan::step_text), never while planning.
  [[nodiscard]] virtual std::string explain(Plan const& plan, Step const& step) const = 0;
};


// The rules of a node kind: NAME_rules, one constant object per kind (plan/detail/rules/<family>.hpp
// ends with it; expr/op_list.hpp lists the kinds). Defined in plan/detail/rules.hpp, after them.
constexpr OpRules const& rules_for(NodeKind kind);

}  // namespace tessel::plan
