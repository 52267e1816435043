#pragma once
// static_jit<Program>(f): a function whose plan the compiler made (plan/static_plan.hpp), called
// without planning or a plan-cache look-up. A call checks what only the run can know (that each
// tensor has the shape and sharding the program states, and which devices the mesh has), binds the
// arguments and runs the instruction list.
//
//   auto step = tessel::static_jit<Megatron>(block);   // static_assert on decltype(step)::plan
//   Tensor<float> y = step(x, w1, w2);
//
// Binding: the first call (and a call on other devices than the last) lays the compile-time plan
// over the mesh the arguments live on: each node's planned sharding over the abstract mesh becomes
// the same layout over those devices, and the instruction list is written out again with its
// labels (Kokkos Tools': std::format is not constexpr) and checked, instruction by
// instruction, against the one the compiler made. No sharding is chosen then; a later call on the
// same devices reuses the bound plan and its kernels.
#include "tessel/core/compile_pass.hpp"
#include <array>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "tessel/core/error.hpp"
#include "tessel/plan/static_plan.hpp"
#include "tessel/runtime/evaluate.hpp"
#include "tessel/runtime/device_placement.hpp"

// 1 where the compiler can plan in constexpr; 0 under nvcc, whose front end cannot run tessel's
// planner (a static_jit there fails with one static_assert saying so). Code that also builds for
// CUDA keeps its static_jit uses under #if TESSEL_STATIC_JIT; jit makes the same plan at run time.
#if TESSEL_NVCC
#define TESSEL_STATIC_JIT 0
#else
#define TESSEL_STATIC_JIT 1
#endif

namespace tessel {

namespace detail {
// Fails naming the argument, what it is and what the program states.
[[noreturn]] void throw_static_argument(std::size_t index, std::string const& have, std::string const& want);
[[noreturn]] void throw_static_mesh(std::size_t index, Mesh const& have, Mesh const& first);
[[noreturn]] void throw_static_mismatch(std::size_t step, std::string const& compiled, std::string const& bound);
// "float32 (16, 64) P('dp') over ('dp': 2, 'mp': 4)"
std::string static_argument_text(char const* dtype, Shape const& shape, PartitionSpec const& spec, MeshAxes const& mesh);
std::string static_step_text(plan::StaticStep const& s);
// The plan's shardings over the abstract mesh laid over `mesh`'s devices.
void bind_shardings(std::vector<plan::NodePlan>& nodes, Mesh const& mesh);
}  // namespace detail

template <plan::StaticProgram Program, class F>
class StaticJit {
  using Args = std::remove_cvref_t<decltype(Program::args)>;
  static constexpr std::size_t num_args = std::tuple_size_v<Args>;
#if !TESSEL_STATIC_JIT
  static_assert(sizeof(F) == 0,
                "tessel: static_jit plans in the compiler, and nvcc's front end cannot run tessel's planner "
                "there (plan/detail/propagate.hpp); in files nvcc compiles use jit, which makes the same plan "
                "at its first call");
#endif

 public:
  // The plan the compiler made: static_assert on it.
  static constexpr auto plan = static_plan<Program>(F{});

  constexpr explicit StaticJit(F const&) {}

  template <class... Ts>
  auto operator()(Tensor<Ts> const&... args) {
    static_assert(sizeof...(Ts) == num_args, "tessel: a static_jit function takes exactly its program's arguments");
    static_assert([]<std::size_t... I>(std::index_sequence<I...>) {
      return (std::same_as<Ts, typename std::tuple_element_t<I, Args>::value_type> && ...);
    }(std::index_sequence_for<Ts...>{}), "tessel: a static_jit argument's element type differs from its program's Arg<T>");
    Mesh const* mesh = nullptr;
    [&]<std::size_t... I>(std::index_sequence<I...>) { (check_argument<I>(args, mesh), ...); }(
        std::index_sequence_for<Ts...>{});
    detail::not_replayable("a static_jit call");  // its plan is rebound when the mesh changes
    auto e = F{}(args...);
    using E = decltype(e);
    if (!bound_ || !(bound_mesh_ == *mesh)) bind<E>(e, *mesh);
    // The run's value slots live with the function, so a call allocates only what its kernels make.
    detail::bind_inputs(e, 0, state_);
    auto result = detail::execute(*bound_, kernels_, state_);
    for (auto& v : state_.values) v.reset();
    for (auto& v : state_.inputs) v.reset();
    for (auto& v : state_.paired) v.reset();
    return Tensor<expr_value_t<E>>(std::move(result));
  }

  // The bound plan (none before the first call) and its text, as explain prints run-time plans.
  [[nodiscard]] plan::Plan const* bound_plan() const { return bound_ ? &*bound_ : nullptr; }
  // ... and the kernels its steps run (none before the first call).
  [[nodiscard]] detail::StepKernels const& bound_kernels() const { return kernels_; }
  [[nodiscard]] std::string explain() const {
    return bound_ ? plan::to_string(*bound_, nullptr, detail::placement_note()) : std::string("static_jit: not bound to devices yet (call it once)");
  }

 private:
  template <std::size_t I, class T>
  static void check_argument(Tensor<T> const& t, Mesh const*& mesh) {
    static constexpr auto const& arg = std::get<I>(Program::args);
    static constexpr ShardLayout layout(Program::mesh, arg.spec);  // resolved by the compiler
    NamedSharding const& s = t.sharding();
    if (!(t.shape() == arg.shape) || !(s.layout() == layout))
      detail::throw_static_argument(I, detail::static_argument_text(plan::dtype_name<T>(), t.shape(), s.spec(), s.mesh().axes()),
                                    detail::static_argument_text(plan::dtype_name<T>(), arg.shape, arg.spec, Program::mesh));
    if (mesh != nullptr && !(*mesh == s.mesh())) detail::throw_static_mesh(I, s.mesh(), *mesh);
    mesh = &s.mesh();
  }

  template <class E>
  void bind(E const& e, Mesh const& mesh) {
    plan::Plan p;
    plan::describe(e, p.graph);
    for (std::size_t i = 0; i < p.graph.size(); ++i) p.graph[i].alias = plan.alias[i];
    p.nodes.assign(plan.nodes.begin(), plan.nodes.end());
    detail::bind_shardings(p.nodes, mesh);
    constexpr plan::CostModel model = plan::static_cost_model<Program>();
    plan::schedule(p, model);
    if (plan.requested && !(*plan.nodes.back().out == *plan.requested))
      plan::reshard_result(p, plan.requested->with_devices(mesh), model);
    for (std::size_t k = 0; k < std::max(p.steps.size(), plan.num_steps); ++k) {
      plan::StaticStep compiled = k < plan.num_steps ? plan.steps[k] : plan::StaticStep{};
      plan::StaticStep bound = k < p.steps.size() ? plan::static_step(p.steps[k], p.graph) : plan::StaticStep{};
      if (!(compiled == bound)) detail::throw_static_mismatch(k, detail::static_step_text(compiled), detail::static_step_text(bound));
    }
    p.last_read = plan::last_reads(p);  // (as make_plan's: values dropped after their last read)
    p.priced_by = requires { Program::cost_model; } ? "the program's own constant (static_jit)"
                                                     : "defaults (static_jit: a calibrated model prices run-time plans only)";
    kernels_ = detail::bind_kernels<E>(p);
    bound_ = std::move(p);
    bound_mesh_ = mesh;
    state_ = detail::RunState(std::max(bound_->slots, bound_->graph.size()));
  }

  std::optional<plan::Plan> bound_;
  detail::StepKernels kernels_;
  Mesh bound_mesh_{Program::mesh};
  detail::RunState state_{0};
};

// A function planned by the compiler for Program's constants (plan/static_plan.hpp).
template <plan::StaticProgram Program, class F>
auto static_jit(F const& f) {
  return StaticJit<Program, F>(f);
}

}  // namespace tessel
