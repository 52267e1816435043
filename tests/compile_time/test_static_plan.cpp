// Plans the compiler makes (plan/static_plan.hpp): what they are is asserted at compile time (the
// static_asserts below are the test: this file does not compile if one fails), and each runs, bound
// to devices, with the run-time planner's plan (same fingerprint) and the unsharded values.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "compile_time/programs.hpp"
#include "compile_time/static_checks.hpp"

using namespace tessel;
using namespace tessel::test::programs;
using plan::Collective;
using plan::StepKind;

// Megatron's block: exactly one all-reduce, over mp, and nothing gathered, on every mesh.
template <class M>
constexpr bool megatron_ok() {
  constexpr auto p = static_plan<Megatron<M>>(megatron);
  return p.collectives() == 1 && p.count(Collective::all_reduce, "mp") == 1 && p.count(Collective::all_gather) == 0 &&
         !p.gathers_an_argument() && p.kernels() == 3 && p.out_is(P(M::dp));
}
static_assert(megatron_ok<Mesh1D>() && megatron_ok<Mesh2D>() && megatron_ok<Mesh2DTall>() && megatron_ok<Mesh3D>());

// With its output split over mp: exactly one reduce-scatter (over mp), no all-reduce.
template <class M>
constexpr bool megatron_scattered_ok() {
  constexpr auto p = static_plan<MegatronScattered<M>>(megatron);
  return p.collectives() == 1 && p.count(Collective::reduce_scatter, "mp") == 1 && p.count(Collective::all_reduce) == 0 &&
         p.out_is(P(M::dp, "mp"));
}
static_assert(megatron_scattered_ok<Mesh1D>() && megatron_scattered_ok<Mesh2D>() &&
              megatron_scattered_ok<Mesh2DTall>() && megatron_scattered_ok<Mesh3D>());

// Uneven shapes plan alike, at compile time too: one all-reduce over mp, nothing gathered; the
// all-reduce is priced by the largest block (ceil(15 / dp) rows).
template <class M>
constexpr bool megatron_uneven_ok() {
  constexpr auto p = static_plan<MegatronUneven<M>>(megatron);
  return p.collectives() == 1 && p.count(Collective::all_reduce, "mp") == 1 && p.count(Collective::all_gather) == 0 &&
         !p.gathers_an_argument() && p.kernels() == 3 && p.out_is(P(M::dp));
}
static_assert(megatron_uneven_ok<Mesh1D>() && megatron_uneven_ok<Mesh2D>() && megatron_uneven_ok<Mesh2DTall>() &&
              megatron_uneven_ok<Mesh3D>());
static_assert(static_plan<MegatronUneven<Mesh2D>>(megatron).bytes(Collective::all_reduce) == 8 * 64 * 4);

// The all-reduce's bytes: each device's partial [16 / dp, 64] float32 block.
static_assert(static_plan<Megatron<Mesh2D>>(megatron).bytes(Collective::all_reduce) == 8 * 64 * 4);
static_assert(static_plan<Megatron<Mesh1D>>(megatron).bytes(Collective::all_reduce) == 16 * 64 * 4);

// softmax over the dimension split over mp: the row max and the row sum each meet in an
// all-reduce over mp (nothing gathered), in three kernels.
template <class M>
constexpr bool softmax_ok() {
  constexpr auto p = static_plan<Softmax<M>>(softmax_rows);
  return p.count(Collective::all_reduce, "mp") == 2 && p.collectives() == 2 && p.count(Collective::all_gather) == 0 &&
         p.out_is(P(M::dp, "mp"));
}
static_assert(softmax_ok<Mesh1D>() && softmax_ok<Mesh2D>() && softmax_ok<Mesh2DTall>() && softmax_ok<Mesh3D>());

// A chain of constraints ending replicated: the last step is an all-gather to P().
static_assert(static_plan<ReshardChain<Mesh2D>>(reshard_chain).out_is(P()));
static_assert(static_plan<ReshardChain<Mesh2D>>(reshard_chain).count(Collective::all_gather) == 1);

// dot_general with a batch dimension over dp and its contraction over mp: one all-reduce over mp.
template <class M>
constexpr bool batched_ok() {
  constexpr auto p = static_plan<BatchedDot<M>>(batched_dot);
  return p.collectives() == 1 && p.count(Collective::all_reduce, "mp") == 1 && p.kernels() == 1;
}
static_assert(batched_ok<Mesh1D>() && batched_ok<Mesh2D>() && batched_ok<Mesh2DTall>() && batched_ok<Mesh3D>());

// Heads made by reshape and transpose of a projection split over mp: nothing moves between devices.
template <class M>
constexpr bool heads_ok() {
  constexpr auto p = static_plan<Heads<M>>(heads);
  return p.collectives() == 0 && p.out_is(P(M::dp, "mp"));
}
static_assert(heads_ok<Mesh1D>() && heads_ok<Mesh2D>() && heads_ok<Mesh2DTall>() && heads_ok<Mesh3D>());

namespace {
template <class M>
void check_all_programs(Mesh const& mesh) {
  test::check_static_program<Heads<M>>(heads, mesh);
  test::check_static_program<Megatron<M>>(megatron, mesh);
  test::check_static_program<MegatronScattered<M>>(megatron, mesh);
  test::check_static_program<MegatronUneven<M>>(megatron, mesh);
  test::check_static_program<Softmax<M>>(softmax_rows, mesh);
  test::check_static_program<ReshardChain<M>>(reshard_chain, mesh, [](auto const& x) { return exp(x * 2.0f + 1.0f); });
  test::check_static_program<BatchedDot<M>>(batched_dot, mesh);
}
}  // namespace

TEST_CASE("static plans run as the run-time planner's plans, with the unsharded values", "[compile_time]") {
  SECTION("1-D") { check_all_programs<Mesh1D>(make_mesh(Mesh1D::mesh)); }
  SECTION("2-D") { check_all_programs<Mesh2D>(make_mesh(Mesh2D::mesh)); }
  SECTION("2-D, the other way") { check_all_programs<Mesh2DTall>(make_mesh(Mesh2DTall::mesh)); }
  SECTION("3-D") { check_all_programs<Mesh3D>(make_mesh(Mesh3D::mesh)); }
  SECTION("devices in another order") {
    check_all_programs<Mesh2D>(make_mesh(Mesh2D::mesh, {7, 6, 5, 4, 3, 2, 1, 0}));
  }
}

TEST_CASE("a statically planned call checks what only the run knows", "[compile_time]") {
  using Catch::Matchers::ContainsSubstring;
  auto mesh = make_mesh(Mesh2D::mesh);
  auto step = static_jit<Megatron<Mesh2D>>(megatron);
  auto [x, w1, w2] = test::static_arguments<Megatron<Mesh2D>>(mesh);
  SECTION("an argument with another sharding") {
    auto wrong = device_put(w1, NamedSharding(mesh, P("mp")));
    REQUIRE_THROWS_WITH(step(x, wrong, w2),
                        ContainsSubstring("static_jit: argument 1 is float32 (64, 128) P('mp') over mesh axes "
                                          "('dp': 2, 'mp': 4), but the function was planned for float32 (64, 128) "
                                          "P(None, 'mp')"));
  }
  SECTION("an argument of another shape") {
    auto wrong = random::normal(PRNGKey(3), {128, 32}, NamedSharding(mesh, P("mp")));
    REQUIRE_THROWS_WITH(step(x, w1, wrong), ContainsSubstring("argument 2 is float32 (128, 32) P('mp')"));
  }
  SECTION("a mesh with other axes") {
    auto other = make_mesh({4, 2}, {"dp", "mp"});
    auto wrong = random::normal(PRNGKey(1), {16, 64}, NamedSharding(other, P("dp")));
    REQUIRE_THROWS_WITH(step(wrong, w1, w2), ContainsSubstring("over mesh axes ('dp': 4, 'mp': 2), but the function "
                                                               "was planned for float32 (16, 64) P('dp') over mesh "
                                                               "axes ('dp': 2, 'mp': 4)"));
  }
  SECTION("arguments on two meshes") {
    auto other = make_mesh(Mesh2D::mesh, {1, 0, 2, 3, 4, 5, 6, 7});
    auto moved = random::normal(PRNGKey(2), {64, 128}, NamedSharding(other, P(None, "mp")));
    REQUIRE_THROWS_WITH(step(x, moved, w2), ContainsSubstring("static_jit: argument 1 lives on Mesh('dp': 2, 'mp': 4; "
                                                              "devices [1 0 2 3 4 5 6 7]), but the arguments before "
                                                              "it on"));
  }
  // Nothing was bound by the failed calls; a good one still runs.
  REQUIRE(step.bound_plan() == nullptr);
  REQUIRE(step(x, w1, w2).shape() == Shape{16, 64});
}

TEST_CASE("with_sharding_constraint takes a PartitionSpec over its operand's mesh", "[compile_time]") {
  using Catch::Matchers::ContainsSubstring;
  auto mesh = make_mesh(Mesh2D::mesh);
  auto x = random::normal(PRNGKey(1), {16, 64}, NamedSharding(mesh, P("dp")));
  auto y = eval(with_sharding_constraint(x * 2.0f, P(None, "mp")));
  REQUIRE(y.sharding() == NamedSharding(mesh, P(None, "mp")));
  test::require_close(y.to_host(), eval(test::whole(x) * 2.0f).to_host());
  REQUIRE_THROWS_WITH(with_sharding_constraint(x, P("tp")),
                      ContainsSubstring("P('tp') names mesh axis 'tp', which is not in the mesh ('dp': 2, 'mp': 4)"));
  auto local = random::normal(PRNGKey(1), {16, 64});
  REQUIRE_THROWS_WITH(with_sharding_constraint(local, P("dp")),
                      ContainsSubstring("with_sharding_constraint: P('dp') needs a mesh, and the operand of shape "
                                        "(16, 64) is on a single device; pass a NamedSharding"));
}
