#pragma once
// A plan: for every node of the graph, the sharding its value has and what it costs to get it
// there; and the steps the executor will run, in order, as explain prints them.
#include <optional>
#include <string>
#include <vector>

#include "tessel/plan/cost_model.hpp"
#include "tessel/plan/graph.hpp"

namespace tessel::plan {

enum class Collective : std::uint8_t { none, all_reduce, reduce_scatter };

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
  Collective collective = Collective::none;
  FixedVector<std::uint8_t, max_mesh_axes> collective_axes;
  std::optional<NamedSharding> after_collective;
  // tensor nodes (their reshard) and boundaries (reduce, dot, constraint, concatenate): an earlier
  // node computing the same value with the same plan, whose value this one reuses; -1 for none.
  int same_as = -1;

  friend bool operator==(NodePlan const&, NodePlan const&) = default;
};

// Two nodes planned to compute alike: the same plan, whether or not either reuses another value.
inline bool computes_alike(NodePlan a, NodePlan b) {
  a.same_as = b.same_as = -1;
  return a == b;
}

// A reshard that is one collective is its own step kind; `reshard` is what moves no data between
// devices (a local slice) or moves it by plain copies (between different meshes).
enum class StepKind : std::uint8_t {
  reshard, kernel, all_reduce, reduce_scatter, all_gather, all_to_all, collective_permute,
  view  // a reshape that reinterprets each device's block: no kernel, no data moved
};

struct Step {
  StepKind kind;
  int node;            // graph node the step produces
  int devices;         // devices running it
  double bytes;        // bytes per device the estimate takes (see plan/reshard.hpp for reshards)
  double estimate_us;  // cost model estimate (0 for kernels)
  std::string text;    // one line of explain
};

struct Plan {
  Graph graph;
  std::vector<NodePlan> nodes;
  std::vector<Step> steps;

  [[nodiscard]] int count(StepKind kind) const {
    int n = 0;
    for (auto const& s : steps) n += s.kind == kind;
    return n;
  }
};

// Sharding propagation (GSPMD-style), collective choice and fusion boundaries for a graph whose
// root must come out with `requested` (or with whatever propagation gives, when absent).
Plan make_plan(Graph graph, std::optional<NamedSharding> const& requested, CostModel const& model);

// The plan as text: one line per kernel, collective and reshard.
std::string to_string(Plan const& plan);

}  // namespace tessel::plan
