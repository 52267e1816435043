// Building an expression and finding its cached plan must not touch the heap: a jitted step in a
// training loop pays only for its kernels. Counted with a replaced global operator new (this
// test has a binary of its own for that reason).
#include <catch2/catch_test_macros.hpp>

#include "support/allocation_counter.hpp"
#include "tessel/runtime/static_jit.hpp"
#include "tessel/runtime/stream.hpp"
#include "tessel/tessel.hpp"

using tessel::test::allocations;
using namespace tessel;

TEST_CASE("building expressions and cached plan look-ups allocate nothing", "[expr][allocation]") {
  auto mesh = make_mesh({8}, {"x"});
  NamedSharding s(mesh, P("x", None));
  auto x = random::normal(PRNGKey(0), {64, 32}, s);
  auto a = random::normal(PRNGKey(1), {64, 32}, s);
  (void)plan_of(tanh(a * x + 1.0f) * 2.0f - x / 3.0f);  // first look-up plans (allocates)
  (void)plan_of(softmax(x));

  long before = allocations();
  auto chain = tanh(a * x + 1.0f) * 2.0f - x / 3.0f;
  auto sm = softmax(x);
  auto const& p1 = plan_of(chain);
  auto const& p2 = plan_of(sm);
  long after = allocations();
  CHECK(after - before == 0);
  CHECK(p1.count(plan::StepKind::kernel) == 1);
  CHECK(p2.count(plan::StepKind::kernel) == 1);

  // Views, concatenate and matmul too.
  auto w = random::normal(PRNGKey(2), {32, 16}, NamedSharding(mesh, P()));
  auto build_more = [&] {
    return concatenate(0, reshape(slice_in_dim(transpose(x), 0, 16, 0), {16, 64}), matmul(transpose(w), transpose(x)));
  };
  (void)plan_of(build_more());
  long views_before = allocations();
  auto more = build_more();
  auto const& p3 = plan_of(more);
  CHECK(allocations() - views_before == 0);
  CHECK(p3.count(plan::StepKind::kernel) >= 2);

  // The counter does see allocations (the test can fail): a plan miss allocates.
  long miss_before = allocations();
  (void)plan_of(exp(x) + a);
  CHECK(allocations() > miss_before);
}

#if TESSEL_STATIC_JIT  // nvcc cannot plan in constexpr (runtime/static_jit.hpp)
namespace {
struct Tiny {
  static constexpr MeshAxes mesh{{8}, {"x"}};
  static constexpr std::tuple args{Arg<float>{{64, 32}, P("x")}};
};
constexpr auto scale = [](auto const& v) { return tanh(v * 2.0f) + 1.0f; };
}  // namespace

TEST_CASE("a statically planned call allocates only what its instructions make", "[expr][allocation]") {
  // The counter counts every thread's allocations: the host queues' threads allocate as they serve.
  if (detail::host_queues_active()) SKIP("the asynchronous host mode (TESSEL_ASYNC=1): counts include the queues' threads");
  auto x = random::normal(PRNGKey(0), {64, 32}, NamedSharding(make_mesh(Tiny::mesh), P("x")));
  auto step = static_jit<Tiny>(scale);
  (void)step(x);  // binds the plan to the devices (allocates)
  plan::Plan const& bound = *step.bound_plan();
  // The instructions alone, run on slots made beforehand: what the result and its kernels need.
  long run_only = 0;
  {
    detail::RunState state(std::max(bound.slots, bound.graph.size()));
    detail::bind_inputs(scale(x), 0, state);
    long before = allocations();
    auto result = detail::execute(bound, step.bound_kernels(), state);
    run_only = allocations() - before;
  }
  long before = allocations();
  auto y = step(x);
  long call = allocations() - before;
  CHECK(call == run_only);  // no look-up, no slots: the call itself allocates nothing
  CHECK(call > 0);          // and the counter sees the result's memory (the test can fail)
  // A cached jit call allocates more: its run's value slots.
  auto f = jit(scale);
  (void)f(x);
  long jit_before = allocations();
  auto z = f(x);
  CHECK(allocations() - jit_before > call);
}
#endif
