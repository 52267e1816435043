#pragma once
// eval, explain and plan_of: an expression's plan (made once per expression type, shapes and
// shardings, plan/cache.hpp), then its instruction list run by the executor (runtime/execute.hpp).
// explain prints the list that runs.
#include <algorithm>
#include <optional>
#include <string>

#include "tessel/expr/node.hpp"
#include "tessel/plan/cache.hpp"
#include "tessel/runtime/execute.hpp"
#include "tessel/runtime/memory_check.hpp"
#include "tessel/runtime/program.hpp"
#include "tessel/runtime/region_kernels.hpp"
#include "tessel/runtime/shard_map_scope.hpp"
#include "tessel/runtime/tensor.hpp"
#include "tessel/runtime/device_placement.hpp"

namespace tessel {

// The plan for e (and the requested output sharding).
template <Expression E>
plan::Plan const& plan_of(E const& e, std::optional<NamedSharding> const& out = std::nullopt) {
  return plan::plan_for(e, out);
}

// Evaluates an expression now, with the planned sharding or the one requested.
template <Expression E>
Tensor<expr_value_t<E>> eval(E const& e, std::optional<NamedSharding> const& out = std::nullopt) {
  static_assert(Element<expr_value_t<E>>, "tessel: an expression's value must have one of the nine dtypes (core/dtype.hpp)");
  if constexpr (!detail::depth_ok<E>) {
    return Tensor<expr_value_t<E>>(nullptr);  // not reached: too deep an expression does not compile (node.hpp)
  } else {
    auto const& plan = plan::plan_for(e, out);
    auto const& kernels = detail::kernels_for<E>(plan);
    if (detail::shard_map_recorder) [[unlikely]]  // ShardMapped::explain is watching
      detail::record_plan_text(plan::to_string(plan, nullptr, detail::placement_note()));
    detail::RunState state(std::max(plan.slots, plan.graph.size()));
    detail::bind_inputs(e, 0, state);
    detail::RecordedStep step(plan, kernels, state);  // a jitted body being recorded (runtime/program.hpp)
    auto result = detail::execute(plan, kernels, state);
    step.made(result);
    // Inside shard_map: the result's blocks differ along the axes the plan's root says.
    if (result->varying != plan.graph.back().varying) [[unlikely]]
      result = detail::with_varying(std::move(result), plan.graph.back().varying);
    return Tensor<expr_value_t<E>>(std::move(result));
  }
}

template <Element T>
template <Expression E>
  requires std::same_as<expr_value_t<E>, T>
Tensor<T>::Tensor(E const& e) : Tensor(eval(e)) {}

// The plan of an expression as text: kernels with the ops they fuse, collectives with mesh axes,
// bytes and estimated cost, reshards with the operand that needs them; one line per instruction
// the executor runs.
// Then what each device holds: the memory analysis's peak, where it is reached, and what is live there.
template <Expression E>
std::string explain(E const& e, std::optional<NamedSharding> const& out = std::nullopt) {
  plan::Plan const& p = plan_of(e, out);
  auto const memory = plan::memory_analysis(p, detail::memory_layout());
  return plan::to_string(p, &memory, detail::placement_note());
}
// The same instructions as JSON (plan::to_json), with their Kokkos Tools labels.
template <Expression E>
std::string explain_json(E const& e, std::optional<NamedSharding> const& out = std::nullopt) {
  plan::Plan const& p = plan_of(e, out);
  auto const memory = plan::memory_analysis(p, detail::memory_layout());
  return plan::to_json(p, &memory, detail::placement_note());
}
// What each device holds while the expression's plan runs, as JAX's compiled.memory_analysis()
// (plan/memory_analysis.hpp): its tensors taken as device_put makes them.
template <Expression E>
plan::MemoryAnalysis memory_analysis(E const& e, std::optional<NamedSharding> const& out = std::nullopt) {
  return plan::memory_analysis(plan_of(e, out), detail::memory_layout());
}

}  // namespace tessel
