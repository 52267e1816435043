#pragma once
// Plans made by the compiler. When a function's mesh axes, argument dtypes, shapes and shardings
// (and its output sharding) are constants, static_plan<Program>(f) runs the planner (the same
// constexpr code every run-time plan comes from, plan/detail/make_plan.hpp) in a constant
// expression: the user can static_assert on its collectives, their mesh axes and bytes, the
// result's sharding and its kernels, and a wrong spec, an axis not in the mesh, a dimension a
// mesh axis does not divide, mismatched contracting sizes or an impossible output sharding is a
// compile error whose first line names them. runtime/static_jit.hpp runs such a plan.
//
//   struct Megatron {                                       // the constants
//     static constexpr MeshAxes mesh{{2, 4}, {"dp", "mp"}};  // which devices: chosen at run time
//     static constexpr std::tuple args{Arg<float>{{16, 64}, P("dp")}, Arg<float>{{64, 256}, P(None, "mp")},
//                                      Arg<float>{{256, 64}, P("mp")}};
//     static constexpr std::optional<PartitionSpec> out{};  // optional: the output's spec
//     static constexpr plan::CostModel cost_model{};        // optional: the model to plan with
//   };
//   constexpr auto block = [](auto const& x, auto const& w1, auto const& w2) { return matmul(gelu(matmul(x, w1)), w2); };
//   constexpr auto plan = static_plan<Megatron>(block);
//   static_assert(plan.count(Collective::all_reduce, "mp") == 1 && plan.count(Collective::all_gather) == 0);
//
// The function is a captureless lambda (or any default-constructible callable literal type) whose
// parameters are `auto`: the compiler calls it with constant stand-ins for the arguments. The cost
// model is the default one, or the program's own constant: a model calibrated on a machine
// (tessel calibrate) applies to run-time plans only. A plan's explain says which model it used.
#include <array>
#include <cstddef>
#include <optional>
#include <tuple>
#include <utility>

#include "tessel/core/static_check.hpp"
#include "tessel/expr/node.hpp"
#include "tessel/plan/detail/make_plan.hpp"
#include "tessel/plan/memory_analysis.hpp"

namespace tessel {

// One argument of a statically planned function: its element type, shape and PartitionSpec.
template <Element T>
struct Arg {
  using value_type = T;
  Shape shape;
  PartitionSpec spec;
};

namespace plan {

// What a program's constants must give: `mesh` (MeshAxes) and `args` (a tuple of Arg); `out`
// (an optional PartitionSpec) and `cost_model` (a CostModel) may be left out.
template <class Program>
concept StaticProgram = requires {
  { Program::mesh } -> std::convertible_to<MeshAxes>;
  std::tuple_size<std::remove_cvref_t<decltype(Program::args)>>::value;
};

template <StaticProgram Program>
constexpr CostModel static_cost_model() {
  if constexpr (requires { Program::cost_model; }) return Program::cost_model;
  else return CostModel{};
}

template <StaticProgram Program>
constexpr std::optional<PartitionSpec> static_out_spec() {
  if constexpr (requires { Program::out; }) return std::optional<PartitionSpec>(Program::out);
  else return std::nullopt;
}

// An instruction of a plan made by the compiler: what a static_assert asks about (its text, made
// with std::format, exists only once the plan is bound to devices at run time).
struct StaticStep {
  StepKind kind = StepKind::kernel;
  int node = 0;
  int devices = 0;
  int result = -1;
  double bytes = 0;
  double estimate_us = 0;
  Collective collective{};
  ShardLayout::AxisList axes;
  NodeKind node_kind = NodeKind::tensor;  // of the node it makes (an all-gather of a tensor: of an argument)

  friend constexpr bool operator==(StaticStep const&, StaticStep const&) = default;
};

// What a static_assert (and the check when a plan is bound to devices) sees of an instruction.
constexpr StaticStep static_step(Step const& s, Graph const& g) {
  return {s.kind, s.node, s.devices, s.result, s.bytes, s.estimate_us, s.collective, s.axes,
          g[static_cast<std::size_t>(s.node)].kind};
}

// A plan made by the compiler, of Nodes graph nodes and at most MaxSteps instructions.
template <std::size_t Nodes, std::size_t MaxSteps>
struct StaticPlan {
  Message error;  // the first failed check ("" when the program is valid)
  MeshAxes mesh;
  std::array<NodePlan, Nodes> nodes{};
  std::array<int, Nodes> alias{};  // each node's GraphNode::alias, as the compiler saw the arguments
  std::array<StaticStep, MaxSteps> steps{};
  std::size_t num_steps = 0;
  std::optional<NamedSharding> requested;  // the output sharding asked for, over the abstract mesh
  // Its memory analysis (plan/memory_analysis.hpp), each device taken as a unit of its own (a GPU
  // each: replicas never share a buffer, so no run holds more): the most bytes a device holds at
  // once, which device (a mesh position) and after which step (-1: its arguments alone).
  std::int64_t peak_bytes = 0;
  int peak_device = -1;
  int peak_step = -1;

  [[nodiscard]] constexpr std::size_t size() const { return num_steps; }
  [[nodiscard]] constexpr std::span<StaticStep const> listed() const { return {steps.data(), num_steps}; }
  [[nodiscard]] constexpr StaticStep const& step(std::size_t k) const { return steps[k]; }

  // Instructions of a kind; collectives of a kind, over any axes or over exactly the named ones.
  [[nodiscard]] constexpr int count(StepKind kind) const { return count_steps(listed(), kind); }
  [[nodiscard]] constexpr int count(Collective c) const { return count_steps(listed(), c); }
  [[nodiscard]] constexpr int count(Collective c, std::initializer_list<std::string_view> axes) const {
    int n = 0;
    for (std::size_t k = 0; k < num_steps; ++k) n += steps[k].kind == StepKind::collective && steps[k].collective == c && over(steps[k], axes);
    return n;
  }
  [[nodiscard]] constexpr int count(Collective c, std::string_view axis) const { return count(c, {axis}); }
  [[nodiscard]] constexpr int collectives() const { return count(StepKind::collective); }
  // Kernels (fused regions, GEMMs, copies) each device runs.
  [[nodiscard]] constexpr int kernels() const { return count(StepKind::kernel); }
  // Bytes per device the collectives of a kind move (the figure their cost takes).
  [[nodiscard]] constexpr double bytes(Collective c) const {
    double b = 0;
    for (std::size_t k = 0; k < num_steps; ++k)
      if (steps[k].kind == StepKind::collective && steps[k].collective == c) b += steps[k].bytes;
    return b;
  }
  // Whether some argument (a weight) is all-gathered before it is used.
  [[nodiscard]] constexpr bool gathers_an_argument() const {
    for (std::size_t k = 0; k < num_steps; ++k)
      if (steps[k].kind == StepKind::collective && steps[k].collective == Collective::all_gather &&
          steps[k].node_kind == NodeKind::tensor)
        return true;
    return false;
  }
  // The result's sharding, as a spec over the program's mesh; and whether it tiles as `spec`
  // does (P('dp') and P('dp', None) alike).
  [[nodiscard]] constexpr PartitionSpec out_spec() const {
    return requested && num_steps > 0 && !(*nodes[Nodes - 1].out == *requested) ? requested->spec()
                                                                                  : nodes[Nodes - 1].out->spec();
  }
  [[nodiscard]] constexpr bool out_is(PartitionSpec const& spec) const {
    return ShardLayout::error(mesh, spec).empty() && ShardLayout(mesh, out_spec()) == ShardLayout(mesh, spec);
  }
  // What static_assert(plan.peak_bytes_per_device() <= 80_GiB) asks (core/buffer_bytes.hpp's literals).
  [[nodiscard]] constexpr std::int64_t peak_bytes_per_device() const { return peak_bytes; }
  // "" when every device holds at most `limit` bytes at once; else why not, with the numbers
  // (TESSEL_STATIC_ASSERT_FITS prints it).
  [[nodiscard]] constexpr Message fits(std::int64_t limit) const {
    Message m;
    if (peak_bytes <= limit) return m;
    m << "static_plan: the plan needs " << peak_bytes << " bytes on device " << static_cast<std::int64_t>(peak_device)
      << " (mesh position) after step " << static_cast<std::int64_t>(peak_step) << ", more than the " << limit
      << " bytes allowed";
    return m;
  }
  // The estimate of the whole plan by the model it was made with (microseconds).
  [[nodiscard]] constexpr double estimate_us() const {
    double us = 0;
    for (std::size_t k = 0; k < num_steps; ++k) us += steps[k].estimate_us;
    return us;
  }

 private:
  // Whether a collective's groups span exactly the named mesh axes.
  [[nodiscard]] constexpr bool over(StaticStep const& s, std::initializer_list<std::string_view> axes) const {
    if (s.axes.size() != axes.size()) return false;
    for (auto name : axes) {
      auto a = mesh.find(name);
      if (!a || std::find(s.axes.begin(), s.axes.end(), static_cast<std::uint8_t>(*a)) == s.axes.end()) return false;
    }
    return true;
  }
};

namespace detail {

using tessel::detail::StaticErrors;

// Argument I's stand-in: a constant tensor leaf over the abstract mesh (a spec that does not fit
// is reported, and replaced by P() so the expression can still be built).
template <std::size_t I, class A>
constexpr auto static_argument(A const& arg, Mesh const& mesh, StaticErrors& errors) {
  using T = typename A::value_type;
  Message m = ShardLayout::error(mesh.axes(), arg.spec, arg.shape);
  PartitionSpec spec = arg.spec;
  if (!m.empty()) {
    Message full;
    full << "static_jit: argument " << static_cast<std::int64_t>(I) << " (" << dtype_name<T>() << " " << arg.shape << " "
         << arg.spec << "): " << m.view();
    tessel::detail::check_failed(full, &errors);
    spec = P();
  }
  return StaticArgNode<T>{{}, {arg.shape, NamedSharding(mesh, spec), &errors, static_cast<int>(I)}};
}

// The function's expression over the stand-ins.
template <StaticProgram Program, class F>
constexpr auto static_expression(Mesh const& mesh, StaticErrors& errors) {
  constexpr std::size_t n = std::tuple_size_v<std::remove_cvref_t<decltype(Program::args)>>;
  static_assert(n <= tessel::detail::max_static_args, "tessel: static_jit takes at most 32 arguments");
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return F{}(static_argument<I>(std::get<I>(Program::args), mesh, errors)...);
  }(std::make_index_sequence<n>{});
}

template <StaticProgram Program, class F>
using static_expression_t =
    decltype(static_expression<Program, F>(std::declval<Mesh const&>(), std::declval<StaticErrors&>()));

}  // namespace detail

// The plan of F for the program's constants, made in a constant expression. `error` holds the
// first failed check; static_plan (below) turns it into a compile error.
template <StaticProgram Program, class F>
constexpr auto make_static_plan() {
  using E = detail::static_expression_t<Program, F>;
  constexpr std::size_t nodes = E::subtree::nodes;
  // A node makes at most a kernel, a collective and two reshard steps of its own, plus one
  // reshard of two steps where another reuses it; the root's result two more.
  StaticPlan<nodes, 6 * nodes + 4> out;
  Mesh const mesh(Program::mesh);
  out.mesh = Program::mesh;
  tessel::detail::StaticErrors errors;
  auto e = detail::static_expression<Program, F>(mesh, errors);
  if (errors.failed) {
    out.error = errors.first;
    return out;
  }
  Graph g;
  describe(e, g);
  if (auto spec = static_out_spec<Program>()) {
    Message m = ShardLayout::error(Program::mesh, *spec, g.back().shape);
    if (!m.empty()) {
      out.error << "static_jit: out_sharding " << *spec << " for the result " << dtype_name<expr_value_t<E>>() << " "
                << g.back().shape << ": " << m.view();
      return out;
    }
    out.requested = NamedSharding(mesh, *spec);
  }
  for (std::size_t i = 0; i < nodes; ++i) out.alias[i] = g[i].alias;
  Plan p = plan_program(g, out.requested, static_cost_model<Program>());
  for (std::size_t i = 0; i < nodes; ++i) out.nodes[i] = p.nodes[i];
  if (p.steps.size() > out.steps.size()) {
    out.error << "static_jit: the plan has " << static_cast<std::int64_t>(p.steps.size())
              << " instructions, more than static_plan holds; please report this program";
    return out;
  }
  out.num_steps = p.steps.size();
  for (std::size_t k = 0; k < p.steps.size(); ++k) out.steps[k] = static_step(p.steps[k], g);
  p.last_read = last_reads(p);  // (as make_plan's)
  MemoryAnalysis const memory = memory_analysis(p, MemoryLayout{}, {}, false);
  out.peak_bytes = memory.peak_bytes;
  out.peak_device = memory.device;
  out.peak_step = memory.peak_step;
  return out;
}

}  // namespace plan

// What static_asserts name: count(Collective::all_reduce, "mp"), count(StepKind::kernel).
using plan::Collective;
using plan::StepKind;

// The plan of `f` for Program's constants, made by the compiler; a failed check is a compile error
// whose first line is the check's message (GCC >= 14, or C++26: core/static_check.hpp).
template <plan::StaticProgram Program, class F>
constexpr auto static_plan(F const&) {
  constexpr auto plan = plan::make_static_plan<Program, F>();
  TESSEL_DETAIL_STATIC_ASSERT_MESSAGE(plan.error)
  return plan;
}

}  // namespace tessel

// static_assert that a statically planned function fits in `limit` bytes per device, failing with
// the plan's peak, its device and step (GCC >= 14 or C++26: core/static_check.hpp), e.g.
//   TESSEL_STATIC_ASSERT_FITS(static_plan<Megatron>(block), 80_GiB);
#define TESSEL_STATIC_ASSERT_FITS(plan, limit) TESSEL_DETAIL_STATIC_ASSERT_MESSAGE((plan).fits(limit))
