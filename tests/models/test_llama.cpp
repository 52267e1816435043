// Llama-family models from safetensors files against Hugging Face's LlamaForCausalLM
// (tests/data/llama, made by make_reference.py there: a Llama 3-style model with grouped-query
// attention and an untied head, one with attention biases (q, k, v and o) and a tied head, one with
// Llama 3.1's rope scaling): float32
// logits to 1e-4 relative on six (dp, mp) meshes, 32 greedy tokens with a KV cache equal to
// generate(do_sample=False)'s, sampled tokens (jax.random.categorical) equal on every mesh, and a
// decode step that gathers no weight or cache and makes no new plan from one position to the next;
// in bfloat16, HF's bfloat16 logits within bfloat16's tolerance, and nearly the same bits on every
// mesh. The same in 2 and 4 processes (models.llama_np2/np4): results are read with
// process_allgather.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "llama.hpp"
#include "support/data.hpp"
#include "support/reference_tokens.hpp"

using namespace tessel;
using models::Llama;
using models::LlamaConfig;

namespace {

struct Reference {
  std::string name;
  std::map<std::string, std::string> config;
  std::int64_t batch = 0, seq = 0, vocab = 0, prompt = 0, steps = 0;
  std::vector<std::int32_t> ids, greedy;
  std::vector<float> logits;
};

std::vector<Reference> read_references() {
  test::ReferenceTokens in("llama", "reference.txt");
  std::vector<Reference> out;
  while (!in.done()) {
    Reference r;
    REQUIRE(in.word() == "model");
    r.name = in.word();
    REQUIRE(in.word() == "config");
    while (in.peek() != "ids") {
      std::string key = in.word();
      r.config[key] = in.word();
    }
    REQUIRE(in.word() == "ids");
    r.batch = static_cast<std::int64_t>(in.dec());
    r.seq = static_cast<std::int64_t>(in.dec());
    for (std::int64_t i = 0; i < r.batch * r.seq; ++i) r.ids.push_back(static_cast<std::int32_t>(in.sdec()));
    REQUIRE(in.word() == "logits");
    REQUIRE(static_cast<std::int64_t>(in.dec()) == r.batch);
    REQUIRE(static_cast<std::int64_t>(in.dec()) == r.seq);
    r.vocab = static_cast<std::int64_t>(in.dec());
    r.logits = in.floats(static_cast<std::size_t>(r.batch * r.seq * r.vocab));
    REQUIRE(in.word() == "greedy");
    REQUIRE(static_cast<std::int64_t>(in.dec()) == r.batch);
    r.prompt = static_cast<std::int64_t>(in.dec());
    r.steps = static_cast<std::int64_t>(in.dec());
    for (std::int64_t i = 0; i < r.batch * r.steps; ++i) r.greedy.push_back(static_cast<std::int32_t>(in.sdec()));
    out.push_back(std::move(r));
  }
  return out;
}

LlamaConfig config_of(Reference const& r) {
  LlamaConfig c;
  c.heads = std::stoll(r.config.at("num_attention_heads"));
  c.kv_heads = std::stoll(r.config.at("num_key_value_heads"));
  c.max_positions = std::stoll(r.config.at("max_position_embeddings"));
  c.rms_eps = std::stod(r.config.at("rms_norm_eps"));
  c.rope_theta = std::stod(r.config.at("rope_theta"));
  if (r.config.contains("rope_scaling_rope_type")) {
    REQUIRE(r.config.at("rope_scaling_rope_type") == "llama3");
    c.rope_scaling.factor = std::stod(r.config.at("rope_scaling_factor"));
    c.rope_scaling.low_freq_factor = std::stod(r.config.at("rope_scaling_low_freq_factor"));
    c.rope_scaling.high_freq_factor = std::stod(r.config.at("rope_scaling_high_freq_factor"));
    c.rope_scaling.original_max_positions = std::stoll(r.config.at("rope_scaling_original_max_position_embeddings"));
  }
  return c;
}

std::string file_of(Reference const& r) { return std::string(TESSEL_TEST_DATA_DIR) + "/llama/" + r.name + ".safetensors"; }

// Six (dp, mp) meshes: one device, mp alone (more devices than KV heads), both ways round, and
// meshes on reordered or other devices.
std::vector<Mesh> meshes() {
  return {make_mesh({1, 1}, {"dp", "mp"}, {0}),
          make_mesh({2, 4}, {"dp", "mp"}),
          make_mesh({4, 2}, {"dp", "mp"}),
          make_mesh({1, 8}, {"dp", "mp"}),
          make_mesh({2, 2}, {"dp", "mp"}, {3, 1, 2, 0}),
          make_mesh({1, 2}, {"dp", "mp"}, {6, 7})};
}

double relative_error(std::vector<float> const& got, std::vector<float> const& want) {
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    diff = std::max(diff, std::abs(static_cast<double>(got[i]) - want[i]));
    scale = std::max(scale, std::abs(static_cast<double>(want[i])));
  }
  return diff / scale;
}

}  // namespace

TEST_CASE("Llama-family models from safetensors give Hugging Face's logits on six meshes", "[models][llama]") {
  for (auto const& r : read_references()) {
    SafetensorsFile file(file_of(r));
    for (auto const& mesh : meshes()) {
      INFO(r.name << " on " << to_string(mesh));
      auto m = models::load_llama<float>(file, mesh, config_of(r));
      CHECK(m.config.vocab == r.vocab);
      CHECK(m.config.tied_head == (r.config.at("tie_word_embeddings") == "True"));
      CHECK(m.config.qkv_bias == (r.config.at("attention_bias") == "True"));
      CHECK(m.config.o_bias == (r.config.at("attention_bias") == "True"));
      auto ids = device_put(r.ids, Shape{r.batch, r.seq}, NamedSharding(mesh, P()));
      auto logits = models::forward(m, ids);
      REQUIRE(logits.shape() == Shape{r.batch, r.seq, r.vocab});
      CHECK(relative_error(process_allgather(logits), r.logits) < 1e-4);
      // The last 3 positions' logits only (HF's logits_to_keep): HF's last 3 rows.
      auto tail = process_allgather(models::forward(m, ids, static_cast<models::KvCache<float>*>(nullptr), 3));
      std::vector<float> want_tail;
      for (std::int64_t b = 0; b < r.batch; ++b)
        for (std::int64_t t = r.seq - 3; t < r.seq; ++t)
          for (std::int64_t v = 0; v < r.vocab; ++v) want_tail.push_back(r.logits[static_cast<std::size_t>((b * r.seq + t) * r.vocab + v)]);
      REQUIRE(tail.size() == want_tail.size());
      CHECK(relative_error(tail, want_tail) < 1e-4);
      // With a cache, in two pieces: the same logits.
      auto cache = models::make_cache(m, r.batch, 16);
      auto first = models::forward(m, eval(slice_in_dim(ids, 0, 7, 1)), &cache);
      auto rest = models::forward(m, eval(slice_in_dim(ids, 7, r.seq, 1)), &cache);
      CHECK(cache.length == r.seq);
      CHECK(relative_error(process_allgather(eval(concatenate(1, first, rest))), r.logits) < 1e-4);
    }
  }
}

TEST_CASE("greedy generation with a KV cache gives generate(do_sample=False)'s tokens", "[models][llama]") {
  for (auto const& r : read_references()) {
    SafetensorsFile file(file_of(r));
    for (auto const& mesh : {make_mesh({1, 1}, {"dp", "mp"}, {0}), make_mesh({2, 4}, {"dp", "mp"})}) {
      INFO(r.name << " on " << to_string(mesh));
      auto m = models::load_llama<float>(file, mesh, config_of(r));
      std::vector<std::int32_t> prompt;
      for (std::int64_t b = 0; b < r.batch; ++b)
        for (std::int64_t t = 0; t < r.prompt; ++t) prompt.push_back(r.ids[static_cast<std::size_t>(b * r.seq + t)]);
      auto const ids = device_put(prompt, Shape{r.batch, r.prompt}, NamedSharding(mesh, P()));
      auto cache = models::make_cache(m, r.batch, r.prompt + r.steps);
      auto tokens = models::generate(m, ids, r.steps, cache);
      CHECK(process_allgather(tokens) == r.greedy);
      // Attention windows of 4 positions (llama::attention_window): the prefill and every decode
      // step read the cache up to their position rounded up to 4, one recorded step per window.
      cache = models::make_cache(m, r.batch, r.prompt + r.steps);
      CHECK(process_allgather(models::generate(m, ids, r.steps, cache, {}, 4)) == r.greedy);
    }
  }
}

TEST_CASE("sampled generation draws the same tokens on every mesh; a cold temperature, top-k 1 or a tiny top-p is greedy",
          "[models][llama]") {
  auto const refs = read_references();
  auto const& r = refs.front();
  SafetensorsFile file(file_of(r));
  std::vector<std::int32_t> prompt;
  for (std::int64_t b = 0; b < r.batch; ++b)
    for (std::int64_t t = 0; t < r.prompt; ++t) prompt.push_back(r.ids[static_cast<std::size_t>(b * r.seq + t)]);
  models::Sampling const warm{.temperature = 1.0, .key = PRNGKey(7)}, cold{.temperature = 1e-4, .key = PRNGKey(7)};
  // Top-k and top-p over a vocabulary split over mp: one candidate left is the greedy token.
  models::Sampling const top_1{.temperature = 1.0, .top_k = 1, .key = PRNGKey(7)};
  models::Sampling const top_p{.temperature = 1.0, .top_p = 1e-6, .key = PRNGKey(7)};
  models::Sampling const both{.temperature = 0.8, .top_k = 8, .top_p = 0.9, .key = PRNGKey(3)};
  std::vector<std::int32_t> first_both;
  std::vector<std::int32_t> first;
  for (auto const& mesh : meshes()) {
    INFO(to_string(mesh));
    auto m = models::load_llama<float>(file, mesh, config_of(r));
    auto ids = device_put(prompt, Shape{r.batch, r.prompt}, NamedSharding(mesh, P()));
    auto cache = models::make_cache(m, r.batch, r.prompt + 16);
    auto drawn = process_allgather(models::generate(m, ids, 16, cache, warm));
    if (first.empty()) first = drawn;
    CHECK(drawn == first);
    for (auto const& s : {cold, top_1, top_p}) {
      cache = models::make_cache(m, r.batch, r.prompt + 16);
      auto greedy = process_allgather(models::generate(m, ids, 16, cache, s));
      for (std::int64_t b = 0; b < r.batch; ++b)
        for (std::int64_t t = 0; t < 16; ++t)
          CHECK(greedy[static_cast<std::size_t>(b * 16 + t)] == r.greedy[static_cast<std::size_t>(b * r.steps + t)]);
    }
    cache = models::make_cache(m, r.batch, r.prompt + 16);
    auto filtered = process_allgather(models::generate(m, ids, 16, cache, both));
    if (first_both.empty()) first_both = filtered;
    CHECK(filtered == first_both);
  }
  // Sampling at temperature 1 is not greedy (with these weights and seed, some token differs).
  std::vector<std::int32_t> greedy16;
  for (std::int64_t b = 0; b < r.batch; ++b)
    for (std::int64_t t = 0; t < 16; ++t) greedy16.push_back(r.greedy[static_cast<std::size_t>(b * r.steps + t)]);
  CHECK(first != greedy16);
}

TEST_CASE("a GQA decode step gathers no weight or cache and makes no new plan per position", "[models][llama][plan]") {
  auto const refs = read_references();
  auto const& r = refs.front();  // 8 query heads over 2 KV heads: each KV head repeated for mp = 4
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  auto m = models::load_llama<float>(SafetensorsFile(file_of(r)), mesh, config_of(r));
  REQUIRE(m.config.kv_heads == 2);
  auto cache = models::make_cache(m, 2, 32);
  auto step = device_put(std::vector<std::int32_t>{3, 5}, Shape{2, 1}, NamedSharding(mesh, P()));
  (void)models::forward(m, step, &cache);
  (void)models::forward(m, step, &cache);
  auto const plans = plan::cached_plans();
  auto before = execution_counts();
  (void)models::forward(m, step, &cache);
  auto after = execution_counts();
  CHECK(plan::cached_plans() == plans);
  CHECK(after[plan::Collective::all_gather] == before[plan::Collective::all_gather]);
  CHECK(after[plan::Collective::all_to_all] == before[plan::Collective::all_to_all]);
  // Per layer one all-reduce after attention and one after the MLP, and one each for the
  // embedding's and the head's vocabulary split (the logits stay split over mp: none there).
  CHECK(after[plan::Collective::all_reduce] - before[plan::Collective::all_reduce] == 2 * m.config.layers + 1);

  // The decode step as one recorded program: the bits of the step above, replayed per position.
  auto step_fn = models::jit_decode_step(m);
  auto position = [&](std::int64_t p) {
    return device_put(std::vector<std::int32_t>{static_cast<std::int32_t>(p)}, Shape{}, NamedSharding(mesh, P()));
  };
  auto replayed = cache;
  for (int k = 0; k < 3; ++k) {
    auto results = step_fn(step, position(replayed.length), replayed.kv);
    REQUIRE(results.size() == replayed.kv.size() + 1);
    std::copy(results.begin() + 1, results.end(), replayed.kv.begin());
    ++replayed.length;
    auto direct = models::forward(m, step, &cache);
    CHECK(test::bitwise_equal(process_allgather(results.front()), process_allgather(direct)));
    for (std::size_t l = 0; l < cache.kv.size(); ++l)
      CHECK(test::bitwise_equal(process_allgather(replayed.kv[l]), process_allgather(cache.kv[l])));
  }
  CHECK_THAT(step_fn.explain(step, position(replayed.length), replayed.kv),
             Catch::Matchers::ContainsSubstring("a recorded program"));

  // A step that attends over the cache's first 8 positions only (a window past the position):
  // the logits of the whole-cache step, and each layer's attention reads 8 positions, not 32.
  auto windowed = models::jit_decode_step(m, 8);
  auto before_window = replayed;
  auto whole = step_fn(step, position(replayed.length), replayed.kv);
  auto seen = windowed(step, position(before_window.length), before_window.kv);
  auto const a = process_allgather(whole.front()), b = process_allgather(seen.front());
  REQUIRE(a.size() == b.size());
  for (std::size_t i = 0; i < a.size(); ++i) CHECK(std::abs(a[i] - b[i]) <= 1e-5f * (1 + std::abs(a[i])));
  // The first layer's keys and values come before any attention: the same bits. The later layers'
  // come after a weighted sum over 8 positions or over 32 (24 weights of 0): a BLAS may sum another
  // K in another order (OpenBLAS's SkylakeX kernels do), so they agree as the logits do.
  for (std::size_t l = 1; l < whole.size(); ++l) {
    auto const x = process_allgather(whole[l]), y = process_allgather(seen[l]);
    if (l <= 2) CHECK(test::bitwise_equal(x, y));
    for (std::size_t i = 0; i < x.size(); ++i) CHECK(std::abs(x[i] - y[i]) <= 1e-5f * (1 + std::abs(x[i])));
  }
  // Its scores cover 8 positions, read from the cache in place (no copy of the window).
  std::string const text = windowed.explain(step, position(before_window.length), before_window.kv);
  CHECK_THAT(text, Catch::Matchers::ContainsSubstring("dot_general -> float32[2,4,1,2,8]"));
  CHECK_THAT(text, !Catch::Matchers::ContainsSubstring("float32[2,4,1,2,32]"));
  CHECK_THAT(text, Catch::Matchers::ContainsSubstring("in place"));
  CHECK_THAT(text, !Catch::Matchers::ContainsSubstring("view_copy[slice"));
  CHECK_THAT(step_fn.explain(step, position(replayed.length), replayed.kv),
             Catch::Matchers::ContainsSubstring("dot_general -> float32[2,4,1,2,32]"));
  CHECK(models::llama::attention_window(7, 32, 8) == 8);
  CHECK(models::llama::attention_window(8, 32, 8) == 16);
  CHECK(models::llama::attention_window(31, 32, 8) == 32);
}

TEST_CASE("load_llama and make_cache name what is wrong", "[models][llama]") {
  auto const refs = read_references();
  auto const& r = refs.front();
  auto mesh = make_mesh({1, 1}, {"dp", "mp"}, {0});
  SafetensorsFile file(file_of(r));
  LlamaConfig c = config_of(r);
  c.kv_heads = 3;
  CHECK_THROWS_WITH(models::load_llama<float>(file, mesh, c),
                    Catch::Matchers::ContainsSubstring("llama: 8 query heads are not a multiple of 3 key/value heads"));
  c = config_of(r);
  c.heads = 0;
  CHECK_THROWS_WITH(models::load_llama<float>(file, mesh, c),
                    Catch::Matchers::ContainsSubstring("load_llama: the config must give the number of attention heads"));
  auto m = models::load_llama<float>(file, mesh, config_of(r));
  CHECK_THROWS_WITH(models::make_cache(m, 1, 65),
                    Catch::Matchers::ContainsSubstring("make_cache: 65 positions, more than the model's rotary table holds (64)"));
  auto cache = models::make_cache(m, 1, 4);
  auto ids = device_put(std::vector<std::int32_t>{1, 2, 3, 4, 5}, Shape{1, 5}, NamedSharding(mesh, P()));
  CHECK_THROWS_WITH(models::forward(m, ids, &cache),
                    Catch::Matchers::ContainsSubstring("llama forward: positions 0..4 run past the cache's 4"));
  CHECK(cache.length == 0);
}

TEST_CASE("a bfloat16 Llama from safetensors gives Hugging Face's bfloat16 logits within bfloat16's tolerance",
          "[models][llama]") {
  auto const refs = read_references();
  auto const& r = refs.front();  // tiny_llama; its bfloat16 file and logits
  test::ReferenceTokens in("llama", "reference_bf16.txt");
  REQUIRE(in.word() == "ids");
  REQUIRE(static_cast<std::int64_t>(in.dec()) == r.batch);
  REQUIRE(static_cast<std::int64_t>(in.dec()) == r.seq);
  std::vector<std::int32_t> ids;
  for (std::int64_t i = 0; i < r.batch * r.seq; ++i) ids.push_back(static_cast<std::int32_t>(in.sdec()));
  REQUIRE(ids == r.ids);
  REQUIRE(in.word() == "logits");
  for (int k = 0; k < 3; ++k) (void)in.dec();
  std::vector<float> const want = in.floats(static_cast<std::size_t>(r.batch * r.seq * r.vocab));
  SafetensorsFile file(std::string(TESSEL_TEST_DATA_DIR) + "/llama/tiny_llama_bf16.safetensors");
  std::vector<std::vector<float>> by_mesh;
  for (auto const& mesh : {meshes()[0], meshes()[1], meshes()[2]}) {
    INFO(to_string(mesh));
    auto m = models::load_llama<bfloat16>(file, mesh, config_of(r));
    auto logits = models::forward(m, device_put(r.ids, Shape{r.batch, r.seq}, NamedSharding(mesh, P())));
    std::vector<float> got;
    for (bfloat16 v : process_allgather(logits)) got.push_back(static_cast<float>(v));
    // Both round to bfloat16 (8 bits of mantissa) at the same places (the model computes its norms,
    // SiLU and softmax in float32 as HF does, models/llama.hpp): within 1.5 ulps of the largest
    // logit (measured on a Xeon with AMX: 1.01; 2.27 when every op rounded to bfloat16, as JAX's
    // do). The float32 model's logits are further from both (measured: 1.94 ulps).
    CHECK(relative_error(got, want) < 1.5 / 256);
    CHECK(relative_error(got, r.logits) < 4.0 / 256);
    by_mesh.push_back(got);
  }
  // The meshes split the row-parallel dots' contractions (the attention output and MLP down
  // projections over mp): their partial sums stay float32 through the all-reduce and are rounded
  // once (kernels/dot.cpp), so a mesh changes the order of float32 additions, not how often a sum
  // is rounded to bfloat16. Measured on a Zen 5 (oneDNN GEMMs): every logit bit-equal on the three
  // meshes; rounded per device before, 32% of them were, and they differed by 2 to 3 ulps of the
  // largest.
  for (std::size_t k = 1; k < by_mesh.size(); ++k) {
    std::size_t same = 0;
    for (std::size_t i = 0; i < by_mesh[0].size(); ++i) same += by_mesh[k][i] == by_mesh[0][i];
    double const fraction = static_cast<double>(same) / static_cast<double>(by_mesh[0].size());
    CHECK(fraction > 0.95);
    CHECK(relative_error(by_mesh[k], by_mesh[0]) < 1.0 / 256);  // one ulp of the largest logit
  }
}
