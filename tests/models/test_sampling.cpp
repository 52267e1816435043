// models/sampling.hpp against Hugging Face's logits warpers (tests/data/llama/hf_sampling.txt, made
// by make_sampling_vectors.py with transformers' TopKLogitsWarper and TopPLogitsWarper): the same
// logits kept, the others -inf, on every sharding of the logits on every test mesh.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "sampling.hpp"
#include "support/data.hpp"
#include "support/jax_tensors.hpp"
#include "support/meshes.hpp"

using namespace tessel;

namespace {

std::map<std::string, test::JaxTensor> const& vectors() {
  static auto const v = test::read_jax_tensors("../llama/hf_sampling.txt");
  return v;
}

// What a warper left: the logit where it kept one, -inf elsewhere.
std::vector<float> kept_logits(std::string const& logits_case, std::string const& kept_case) {
  auto logits = vectors().at(logits_case + " logits").as<float>();
  auto kept = vectors().at(kept_case + " kept").as<std::int32_t>();
  for (std::size_t i = 0; i < logits.size(); ++i)
    if (kept[i] == 0) logits[i] = -std::numeric_limits<float>::infinity();
  return logits;
}

template <class Warp>
void check_warper(std::string const& logits_case, std::string const& kept_case, Warp const& warp) {
  INFO(kept_case);
  auto const& x = vectors().at(logits_case + " logits");
  auto const want = kept_logits(logits_case, kept_case);
  for (auto const& mesh : test::all_meshes())
    for (auto const& s : test::shardings_of(mesh, x.shape)) {
      INFO(to_string(mesh) << " " << to_string(s.spec()));
      CHECK(test::bitwise_equal(warp(device_put(x.as<float>(), x.shape, s)).to_host(), want));
    }
}

}  // namespace

TEST_CASE("top_k_logits keeps what HF's TopKLogitsWarper keeps, ties with the k-th included", "[models][sampling]") {
  for (std::int64_t k : {1, 5, 50})
    check_warper("top_k", "top_k_" + std::to_string(k), [k](Tensor<float> const& l) { return models::top_k_logits(l, k); });
}

TEST_CASE("top_p_logits keeps what HF's TopPLogitsWarper keeps", "[models][sampling]") {
  for (int p : {50, 90, 99})
    check_warper("top_p", "top_p_" + std::to_string(p),
                 [p](Tensor<float> const& l) { return models::top_p_logits(l, p / 100.0); });
}

TEST_CASE("top_p_logits after top_k_logits sorts only the survivors, with the same result", "[models][sampling]") {
  auto const& x = vectors().at("top_p logits");
  for (auto const& mesh : test::all_meshes())
    for (auto const& s : test::shardings_of(mesh, x.shape)) {
      INFO(to_string(mesh) << " " << to_string(s.spec()));
      auto filtered = models::top_k_logits(device_put(x.as<float>(), x.shape, s), 20);
      for (double p : {0.5, 0.9}) {
        auto const all = models::top_p_logits(filtered, p).to_host();
        CHECK(test::bitwise_equal(models::top_p_logits(filtered, p, 1, 20).to_host(), all));
        std::size_t finite = 0;
        for (float v : all) finite += std::isfinite(v);
        CHECK(finite < 4 * 20);  // (p cut some of the 20)
      }
    }
}

TEST_CASE("top_p_logits names a p out of range", "[models][sampling]") {
  auto l = device_put(std::vector<float>{1, 2, 3}, Shape{3}, NamedSharding(make_mesh({1}, {"x"}, {0}), P()));
  CHECK_THROWS_WITH(models::top_p_logits(l, 0.0), Catch::Matchers::ContainsSubstring("top_p_logits: p = 0 must be in (0, 1]"));
  CHECK_THROWS_WITH(models::top_p_logits(l, 1.5), Catch::Matchers::ContainsSubstring("p = 1.5 must be in (0, 1]"));
}
