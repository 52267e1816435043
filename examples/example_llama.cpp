// Text generation with a Llama-family decoder (models/llama.hpp) on 8 devices, Megatron tensor
// parallelism over 'mp' and data parallelism over 'dp': prefill the prompts, then decode with a KV
// cache written at each new position (dynamic_update_slice), greedily and then sampling
// (temperature 0.8, top-k 50, top-p 0.9, as HF's generate applies them). Prints the tokens of the
// first sequence and the tokens per second of prefill and decode.
//
//   example_llama                        a random Llama 3-style model (vocabulary 32003, 4 layers,
//                                        hidden 512, 8 query heads over 2 KV heads, rope theta
//                                        500000): 2 KV heads on mp 4 are replicated, not gathered
//   example_llama model.safetensors HEADS KV_HEADS [ROPE_THETA]
//                                        Hugging Face weights (LlamaForCausalLM's tensor names)
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>

#include "llama.hpp"

namespace {

using namespace tessel;

int run(models::Llama<float> const& model, std::int64_t batch, std::int64_t prompt_len, std::int64_t steps) {
  auto const& c = model.config;
  std::cout << "Llama: " << c.layers << " layers, hidden " << c.hidden << ", " << c.heads << " query heads over "
            << c.kv_heads << " KV heads, vocab " << c.vocab << (c.tied_head ? " (tied head)" : "") << " on "
            << to_string(model.mesh) << "\n";
  std::mt19937 rng(0);
  std::vector<std::int32_t> ids(static_cast<std::size_t>(batch * prompt_len));
  for (auto& id : ids) id = static_cast<std::int32_t>(rng() % static_cast<std::uint32_t>(c.vocab));
  auto prompt = device_put(ids, Shape{batch, prompt_len}, NamedSharding(model.mesh, P()));
  auto generate = [&](std::int64_t n, models::Sampling const& how = {}) {
    auto cache = models::make_cache(model, batch, prompt_len + n);
    return models::generate(model, prompt, n, cache, how);
  };
  models::Sampling const sampling{.temperature = 0.8, .top_k = 50, .top_p = 0.9, .key = PRNGKey(0)};
  (void)generate(2);  // plans prefill, decode and the sampling
  (void)generate(2, sampling);

  auto cache = models::make_cache(model, batch, prompt_len + steps);
  auto const t0 = std::chrono::steady_clock::now();
  auto logits = models::forward(model, prompt, &cache);
  logits.block_until_ready();
  double const prefill = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto const t1 = std::chrono::steady_clock::now();
  auto tokens = generate(steps);
  double const total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  double const decode = total - prefill;  // generate prefills once too
  auto print = [&](char const* how, Tensor<std::int32_t> const& t) {
    auto host = t.to_host();
    std::cout << "sequence 0, " << how << ":";
    for (std::int64_t k = 0; k < steps; ++k) std::cout << " " << host[static_cast<std::size_t>(k)];
    std::cout << "\n";
  };
  print("greedy", tokens);
  auto const t2 = std::chrono::steady_clock::now();
  auto sampled = generate(steps, sampling);
  double const sampled_decode = std::chrono::duration<double>(std::chrono::steady_clock::now() - t2).count() - prefill;
  print("sampled", sampled);
  std::cout << "prefill: " << batch << " x " << prompt_len << " tokens in " << prefill * 1e3 << " ms, "
            << static_cast<double>(batch * prompt_len) / prefill << " tokens/s\n"
            << "decode: " << steps - 1 << " steps of " << batch << " tokens, " << decode / static_cast<double>(steps - 1) * 1e3
            << " ms per step, " << static_cast<double>(batch * (steps - 1)) / decode << " tokens/s greedy, "
            << static_cast<double>(batch * (steps - 1)) / sampled_decode << " tokens/s sampled\n";
  return 0;
}

}  // namespace

int main(int argc, char* argv[]) {
  tessel::ScopeGuard guard(argc, argv);
  tessel::set_device_count(8);
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  if (argc >= 4) {
    models::LlamaConfig c;
    c.heads = std::stoll(argv[2]);
    c.kv_heads = std::stoll(argv[3]);
    if (argc >= 5) c.rope_theta = std::stod(argv[4]);
    return run(models::load_llama<float>(SafetensorsFile(argv[1]), mesh, c), 2, 32, 32);
  }
  models::LlamaConfig c;
  c.vocab = 32003, c.hidden = 512, c.intermediate = 1536, c.layers = 4, c.heads = 8, c.kv_heads = 2, c.head_dim = 64;
  c.max_positions = 256, c.rope_theta = 500000;
  return run(models::random_llama<float>(c, mesh), 2, 32, 32);
}
