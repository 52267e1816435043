// Pipeline parallelism (runtime/pipeline.hpp): a stack of MLP stages run as a GPipe pipeline over
// 'pp' equals the stages run one after another unpipelined, on meshes pp alone, dp x pp, pp x mp
// and dp x pp x mp, for several microbatch counts (dividing each device's rows or not: the last
// microbatches short or empty); the schedule's table and bubble fraction; and the errors (a scalar
// batch, a weight not stacked over 'pp', the batch split over 'pp', a stage changing the
// activations' shape).
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "support/close.hpp"
#include "tessel/runtime/pipeline.hpp"
#include "tessel/tessel.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace tessel;

namespace {

constexpr std::int64_t D = 16, H = 32;

// One stage: a Megatron MLP whose hidden units are split over 'mp' (a psum completes it).
auto mlp_stage = [](auto const& w1, auto const& w2, auto const& x) {
  return lax::psum(matmul(relu(matmul(x, w1)), w2), "mp") + x;
};

// The stages one after another on one device: the reference.
std::vector<float> unpipelined(std::vector<float> const& x, std::int64_t batch, std::vector<float> const& w1,
                               std::vector<float> const& w2, int stages) {
  Tensor<float> h = device_put(x, {batch, D});
  for (int s = 0; s < stages; ++s) {
    std::vector<float> a(w1.begin() + s * D * H, w1.begin() + (s + 1) * D * H);
    std::vector<float> b(w2.begin() + s * H * D, w2.begin() + (s + 1) * H * D);
    Tensor<float> ws1 = device_put(a, {D, H}), ws2 = device_put(b, {H, D});
    h = Tensor<float>(matmul(relu(matmul(h, ws1)), ws2) + h);
  }
  return h.to_host();
}

}  // namespace

TEST_CASE("a pipeline over pp equals the stages run one after another", "[pipeline]") {
  struct Case {
    int dp, pp, mp;
  };
  for (auto [dp, pp, mp] : {Case{1, 4, 1}, Case{2, 4, 1}, Case{1, 2, 4}, Case{2, 2, 2}, Case{1, 8, 1}}) {
    std::vector<int> ids(static_cast<std::size_t>(dp * pp * mp));
    for (std::size_t k = 0; k < ids.size(); ++k) ids[k] = static_cast<int>(k);
    auto mesh = make_mesh({dp, pp, mp}, {"dp", "pp", "mp"}, ids);
    std::int64_t const batch = 24 * dp;
    auto x = random::normal(PRNGKey(1), {batch, D});
    auto w1 = random::normal(PRNGKey(2), {pp, D, H}) * 0.2f;
    auto w2 = random::normal(PRNGKey(3), {pp, H, D}) * 0.2f;
    Tensor<float> w1t = w1, w2t = w2;
    auto want = unpipelined(x.to_host(), batch, w1t.to_host(), w2t.to_host(), pp);
    for (int m : {1, 2, 3, 4, 5, 6, 7, 24, 25}) {
      INFO("mesh " << to_string(mesh) << ", " << m << " microbatches");
      auto run = pipeline(mlp_stage, mesh, {P("pp", None, "mp"), P("pp", "mp", None)}, P("dp", None),
                          {.axis = "pp", .microbatches = m});
      Tensor<float> y = run(w1t, w2t, x);
      REQUIRE(y.shape() == Shape{batch, D});
      REQUIRE(y.sharding() == NamedSharding(mesh, P("dp", None)));
      test::require_close(y.to_host(), want);
      REQUIRE(run.step_seconds().size() == static_cast<std::size_t>(m + pp - 1));
      REQUIRE(run.schedule().bubble_fraction() == double(pp - 1) / double(m + pp - 1));
    }
  }
}

TEST_CASE("the pipeline schedule: fill, steady, drain", "[pipeline]") {
  PipelineSchedule s{4, 6};
  REQUIRE(s.steps() == 9);
  REQUIRE(s.microbatch(0, 0) == 0);
  REQUIRE(s.microbatch(0, 1) == -1);
  REQUIRE(s.microbatch(3, 3) == 0);
  REQUIRE(s.microbatch(8, 3) == 5);
  REQUIRE(s.microbatch(8, 2) == -1);
  std::string table = s.to_string();
  INFO(table);
  REQUIRE_THAT(table, ContainsSubstring("step  stage0   stage1   stage2   stage3"));
  REQUIRE_THAT(table, ContainsSubstring("   3  mb3      mb2      mb1      mb0"));
  REQUIRE_THAT(table, ContainsSubstring("bubble fraction (p - 1) / (m + p - 1) = 3 / 9 = 0.333"));
}

TEST_CASE("pipeline errors name the counts, specs and shapes", "[pipeline]") {
  auto mesh = make_mesh({2, 4}, {"dp", "pp"});
  auto x = random::normal(PRNGKey(1), {24, D});
  Tensor<float> w1 = random::normal(PRNGKey(2), {4, D, D});
  auto stage = [](auto const& w, auto const& h) { return matmul(h, w); };
  Tensor<float> scalar = device_put(std::vector<float>{1.0f}, Shape{});
  REQUIRE_THROWS_WITH(pipeline(stage, mesh, {P("pp")}, P(), {.microbatches = 2})(w1, scalar),
                      ContainsSubstring("pipeline: each device's block of the batch (laid out P()) is a scalar; the "
                                        "batch needs a first dimension to split into 2 microbatches"));
  REQUIRE_THROWS_WITH(pipeline(stage, mesh, {P(None, "pp")}, P("dp"), {.microbatches = 2}),
                      ContainsSubstring("pipeline: weight 0 is laid out P(None, 'pp'); its first dimension stacks the "
                                        "stages and must be split over the pipeline axis 'pp' alone"));
  REQUIRE_THROWS_WITH(pipeline(stage, mesh, {P("pp")}, P("pp"), {.microbatches = 2}),
                      ContainsSubstring("the batch is laid out P('pp'), split over the pipeline axis 'pp'"));
  REQUIRE_THROWS_WITH(pipeline(stage, mesh, {P("pp")}, P("dp"), {.axis = "stages", .microbatches = 2}),
                      ContainsSubstring("pipeline: the mesh ('dp': 2, 'pp': 4) has no axis 'stages'"));
  REQUIRE_THROWS_WITH(pipeline(stage, mesh, {P("pp")}, P("dp"), {.microbatches = 0}),
                      ContainsSubstring("pipeline: 0 microbatches; give at least 1"));
  auto widening = [](auto const& w, auto const& h) { return concatenate(1, matmul(h, w), h); };
  REQUIRE_THROWS_WITH(pipeline(widening, mesh, {P("pp")}, P("dp"), {.microbatches = 2})(w1, x),
                      ContainsSubstring("pipeline: the stage function turned a microbatch of shape (6, 16) into shape "
                                        "(6, 32)"));
  // A weight whose stacked dimension is not the stage count on the mesh: its block holds 2 stages.
  Tensor<float> eight = random::normal(PRNGKey(3), {8, D, D});
  REQUIRE_THROWS_WITH(pipeline(stage, mesh, {P("pp")}, P("dp"), {.microbatches = 2})(eight, x),
                      ContainsSubstring("pipeline: weight 0's block on each device has shape (2, 16, 16); its first "
                                        "dimension must hold one stage"));
}
