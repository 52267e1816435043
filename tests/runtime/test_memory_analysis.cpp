// The memory analysis (plan/memory_analysis.hpp) against what the runtime measures
// (runtime/memory_stats.hpp): each device's peak of live bytes above what it held before the call,
// on the Megatron MLP, a transformer layer and the GPT-2 forward (a recorded program), within 5%;
// explain shows it; a plan that cannot fit under TESSEL_DEVICE_MEMORY fails before running.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "gpt2.hpp"
#include "support/memory.hpp"

using namespace tessel;
using Catch::Matchers::ContainsSubstring;

namespace {

Tensor<float> normal(int k, Shape const& shape, NamedSharding const& s) {
  return random::normal(random::fold_in(random::PRNGKey(7), static_cast<std::uint32_t>(k)), shape, s);
}

std::vector<Mesh> meshes() {
  return {make_mesh({2, 4}, {"dp", "mp"}), make_mesh({1, 8}, {"dp", "mp"}), make_mesh({1, 1}, {"dp", "mp"}, {0}),
          make_mesh({2, 2}, {"dp", "mp"}, {3, 1, 2, 0}), make_mesh({4, 2}, {"dp", "mp"}, {7, 6, 5, 4, 3, 2, 1, 0})};
}

}  // namespace

TEST_CASE("the memory analysis of the Megatron MLP is what the runtime holds", "[runtime][memory]") {
  set_device_count(8);
  for (Mesh const& mesh : meshes()) {
    INFO(to_string(mesh));
    auto x = normal(0, {64, 256}, NamedSharding(mesh, P("dp")));
    auto w1 = normal(1, {256, 1024}, NamedSharding(mesh, P(None, "mp")));
    auto w2 = normal(2, {1024, 256}, NamedSharding(mesh, P("mp")));
    auto mlp = matmul(gelu(matmul(x, w1)), w2);
    auto m = memory_analysis(mlp);
    // Every device holds its arguments' blocks: x's row block, a quarter of each weight.
    CHECK(m.of(mesh.device_ids()[0])->argument_bytes > 0);
    test::check_memory_against_measured(m, [&] { return Tensor<float>(mlp); });
    CHECK_THAT(explain(mlp), ContainsSubstring("memory, per device: peak"));
    CHECK_THAT(explain_json(mlp), ContainsSubstring("\"memory_analysis\": {\"peak_bytes\": " + std::to_string(m.peak_bytes)));
  }
}

TEST_CASE("the memory analysis of a bfloat16 matmul counts its float32 partial sums", "[runtime][memory]") {
  set_device_count(8);
  for (Mesh const& mesh : meshes()) {
    INFO(to_string(mesh));
    // The contraction split over mp: each device's GEMM writes float32 partial sums, all-reduced in
    // float32 and rounded once into bfloat16.
    auto x = Tensor<bfloat16>(astype<bfloat16>(normal(0, {64, 512}, NamedSharding(mesh, P("dp", "mp")))));
    auto w = Tensor<bfloat16>(astype<bfloat16>(normal(1, {512, 256}, NamedSharding(mesh, P("mp")))));
    auto m = memory_analysis(matmul(x, w));
    test::check_memory_against_measured(m, [&] { return Tensor<bfloat16>(matmul(x, w)); });
  }
}

TEST_CASE("the memory analysis of a transformer layer is what the runtime holds", "[runtime][memory]") {
  set_device_count(8);
  for (Mesh const& mesh : meshes()) {
    INFO(to_string(mesh));
    auto s = [&](auto... spec) { return NamedSharding(mesh, P(spec...)); };
    auto x = normal(0, {8, 64, 128}, s("dp"));
    auto wq = normal(1, {128, 8, 16}, s(None, "mp"));
    auto wk = normal(2, {128, 8, 16}, s(None, "mp"));
    auto wv = normal(3, {128, 8, 16}, s(None, "mp"));
    auto wo = normal(4, {8, 16, 128}, s("mp"));
    auto g1 = normal(5, {128}, s()), b1 = normal(6, {128}, s()), g2 = normal(7, {128}, s()), b2 = normal(8, {128}, s());
    auto w1 = normal(9, {128, 512}, s(None, "mp"));
    auto w2 = normal(10, {512, 128}, s("mp"));
    auto layer = [](auto const& x, auto const& wq, auto const& wk, auto const& wv, auto const& wo, auto const& g1,
                    auto const& b1, auto const& w1, auto const& w2, auto const& g2, auto const& b2) {
      auto h = layer_norm(x, g1, b1);
      DotDims const project{{2}, {0}, {}, {}};
      auto q = dot_general(h, wq, project);
      auto k = dot_general(h, wk, project);
      auto v = dot_general(h, wv, project);
      auto p = softmax(dot_general(q, k, DotDims{{3}, {3}, {0, 2}, {0, 2}}) * 0.25f);
      auto o = dot_general(p, v, DotDims{{3}, {1}, {0, 1}, {0, 2}});
      auto x1 = x + dot_general(o, wo, DotDims{{1, 3}, {0, 1}, {}, {}});
      return x1 + matmul(gelu(matmul(layer_norm(x1, g2, b2), w1)), w2);
    };
    auto e = layer(x, wq, wk, wv, wo, g1, b1, w1, w2, g2, b2);
    test::check_memory_against_measured(memory_analysis(e), [&] { return Tensor<float>(e); });
  }
}

TEST_CASE("the memory analysis of the GPT-2 forward, a recorded program, is what the runtime holds",
          "[runtime][memory]") {
  set_device_count(8);
  SafetensorsFile const file(std::string(TESSEL_TEST_DATA_DIR) + "/gpt2/tiny_gpt2.safetensors");
  for (Mesh const& mesh : {make_mesh({2, 4}, {"dp", "mp"}), make_mesh({1, 1}, {"dp", "mp"}, {0})}) {
    INFO(to_string(mesh));
    auto model = models::load_gpt2<float>(file, mesh, 4);
    std::vector<std::int32_t> ids(4 * 32);
    for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::int32_t>((i * 37) % model.config.vocab);
    auto tokens = device_put(ids, {4, 32}, NamedSharding(mesh, P("dp")));
    auto const forward = models::jit_forward(model);
    auto m = forward.memory_analysis(tokens);  // (records the program: one call)
    CHECK(m.of(mesh.device_ids()[0])->argument_bytes > 0);  // the weights and the tokens
    // The analysis is of a step-by-step replay; one run as a graph (a GPU's, by default) holds the
    // graph's own buffers besides (runtime/program_graph.hpp).
    use_graphs(false);
    test::check_memory_against_measured(m, [&] { return forward(tokens); });
    use_graphs(true);
    CHECK_THAT(forward.explain(tokens), ContainsSubstring("memory, per device: peak"));
  }
}

TEST_CASE("a plan that cannot fit in TESSEL_DEVICE_MEMORY fails before it runs, naming what is live",
          "[runtime][memory]") {
  set_device_count(8);
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  auto x = normal(0, {128, 512}, NamedSharding(mesh, P("dp")));
  auto w = normal(1, {512, 2048}, NamedSharding(mesh, P(None, "mp")));
  auto const x_before = x.to_host();
  auto const w_before = w.to_host();
  auto e = exp(matmul(x, w)) * 3.0f;  // a plan of its own (not run before)
  auto const m = memory_analysis(e);
  ::setenv("TESSEL_DEVICE_MEMORY", "1MiB", 1);
  try {
    Tensor<float> y = e;
    FAIL("no OutOfMemory");
  } catch (OutOfMemory const& error) {
    std::string const what = error.what();
    CHECK_THAT(what, ContainsSubstring("out of memory, found before running: the plan needs " +
                                       std::to_string(m.peak_bytes) + " bytes"));
    CHECK_THAT(what, ContainsSubstring("on device " + std::to_string(m.device)));
    CHECK_THAT(what, ContainsSubstring("but a device has 1048576 bytes"));
    CHECK_THAT(what, ContainsSubstring("at step #"));
    CHECK_THAT(what, ContainsSubstring("argument (node"));
  }
  ::unsetenv("TESSEL_DEVICE_MEMORY");
  CHECK(x.to_host() == x_before);
  CHECK(w.to_host() == w_before);
  // With room, the same expression runs.
  ::setenv("TESSEL_DEVICE_MEMORY", "1GiB", 1);
  Tensor<float> y = e;
  ::unsetenv("TESSEL_DEVICE_MEMORY");
  CHECK(y.shape() == Shape{128, 2048});
}
