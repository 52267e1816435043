#pragma once
// The run-time half of the compile-time tests: a statically planned program run on a mesh of its
// axes, against the run-time planner's plan (the same fingerprint) and against the same
// computation unsharded (the same values).
#include <catch2/catch_test_macros.hpp>

#include <tuple>

#include "support/close.hpp"
#include "tessel/runtime/static_jit.hpp"
#include "tessel/tessel.hpp"

namespace tessel::test {

// The program's arguments as tensors on `mesh`, with random values.
template <class Program>
auto static_arguments(Mesh const& mesh) {
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    return std::tuple{random::normal(PRNGKey(static_cast<std::int64_t>(I + 1)), std::get<I>(Program::args).shape,
                                     NamedSharding(mesh, std::get<I>(Program::args).spec))...};
  }(std::make_index_sequence<std::tuple_size_v<std::remove_cvref_t<decltype(Program::args)>>>{});
}

// Runs Program's function statically planned on `mesh` (twice: the second call reuses the bound
// plan) and checks it against the run-time planner and the unsharded computation (`reference` on
// single-device copies of the arguments: f itself, unless it names the mesh's axes).
template <class Program, class F, class G>
void check_static_program(F const& f, Mesh const& mesh, G const& reference) {
  INFO("mesh " << to_string(mesh));
  auto args = static_arguments<Program>(mesh);
  auto step = static_jit<Program>(f);
  REQUIRE(step.bound_plan() == nullptr);
  auto y = std::apply(step, args);
  plan::Plan const* bound = step.bound_plan();
  REQUIRE(bound != nullptr);
  std::optional<NamedSharding> out;
  if constexpr (requires { Program::out; })
    if (Program::out) out = NamedSharding(mesh, *Program::out);
  auto const& dynamic = std::apply([&](auto const&... a) -> plan::Plan const& { return plan_of(f(a...), out); }, args);
  INFO("static:\n" << plan::to_string(*bound) << "run time:\n" << plan::to_string(dynamic));
  CHECK(bound->fingerprint() == dynamic.fingerprint());
  CHECK(bound->steps.size() == step.plan.size());
  // The compiler's memory analysis is the run-time one's, each device a unit of its own.
  CHECK(step.plan.peak_bytes_per_device() == plan::memory_analysis(dynamic, plan::MemoryLayout{}).peak_bytes);
  CHECK(step.plan.peak_bytes_per_device() > 0);
  if (out) CHECK(y.sharding() == *out);
  auto want = std::apply([&](auto const&... a) { return eval(reference(whole(a)...)); }, args);
  require_close(y.to_host(), want.to_host());
  auto again = std::apply(step, args);
  CHECK(step.bound_plan() == bound);
  require_close(again.to_host(), want.to_host());
}

template <class Program, class F>
void check_static_program(F const& f, Mesh const& mesh) {
  check_static_program<Program>(f, mesh, f);
}

}  // namespace tessel::test
