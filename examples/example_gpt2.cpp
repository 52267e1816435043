// GPT-2's forward with Megatron tensor parallelism over 'mp' and data parallelism over 'dp' on 8
// devices (models/gpt2.hpp): attention heads and the MLP's hidden dimension split over mp, the
// vocabulary split over mp in the embedding and the logits, the batch over dp. Prints the
// collectives one forward runs and the tokens per second. The whole forward is one jitted call.
//
//   example_gpt2                          a random GPT-2 small of 4 blocks (n_embd 768, 12 heads, the
//                                         real vocabulary 50257, which does not divide the mesh)
//   example_gpt2 model.safetensors HEADS  Hugging Face weights (tensor names as GPT2LMHeadModel's)
//   TESSEL_GPT2_DTYPE=bfloat16            the same in bfloat16 (float32 accumulation inside)
//   TESSEL_GPT2_STAGES=2                  the blocks in 2 pipeline stages over 'pp' (GPipe), on a
//                                         (dp 2, pp 2, mp 2) mesh (4: pp 4, mp 1)
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>

#include "gpt2.hpp"
#include "gpt2_pipeline.hpp"

namespace {

// Times `forward(tokens)` after a first call (which plans, and records a jitted forward), and prints
// the collectives one forward runs and the tokens per second.
template <class Forward>
void time_forward(Forward const& forward, tessel::Tensor<std::int32_t> const& tokens) {
  using namespace tessel;
  auto logits = forward(tokens);  // plans every block (and records the jitted forward)
  auto const before = execution_counts();
  logits = forward(tokens);
  logits.block_until_ready();
  auto const after = execution_counts();
  std::cout << "logits " << to_string(logits.shape()) << " " << to_string(logits.sharding()) << "\none forward ran:";
  for (auto k : plan::all_collectives) std::cout << " " << after[k] - before[k] << " " << plan::name(k) << ",";
  std::cout << " " << after.kernels - before.kernels << " kernels\n";
  int const runs = 3;
  auto const t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) logits = forward(tokens);
  logits.block_until_ready();  // the work is queued: wait for it before stopping the timer
  double const s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / runs;
  std::cout << "forward: " << s * 1e3 << " ms, " << static_cast<double>(tokens.size()) / s << " tokens/s\n";
}

template <class T>
int run(tessel::models::Gpt2<T> const& model, std::int64_t batch, std::int64_t seq, int microbatches) {
  using namespace tessel;
  auto const& c = model.config;
  std::mt19937 rng(0);
  std::vector<std::int32_t> ids(static_cast<std::size_t>(batch * seq));
  for (auto& id : ids) id = static_cast<std::int32_t>(rng() % static_cast<std::uint32_t>(c.vocab));
  auto tokens = device_put(ids, Shape{batch, seq});
  std::cout << "GPT-2: " << c.layers << " blocks, n_embd " << c.embd << ", " << c.heads << " heads, vocab " << c.vocab
            << ", " << name(dtype_of<T>) << "; batch " << batch << " x seq " << seq << " on "
            << to_string(model.mesh) << "\n";
  if (microbatches > 0) {
    auto const stages = models::pipeline_stages(model, microbatches);
    std::cout << "blocks pipelined over 'pp' in " << microbatches << " microbatches per dp group (GPipe):\n"
              << stages.run.schedule().to_string()
              << "Megatron inside each stage: 2 psums per block over 'mp' at each step; one collective-permute "
                 "between steps\n";
    time_forward([&](Tensor<std::int32_t> const& t) { return models::forward(model, stages, t); }, tokens);
    std::cout << "measured bubble: " << stages.run.measured_bubble_fraction() << " (ideal "
              << stages.run.schedule().bubble_fraction() << ")\n";
    return 0;
  }
  auto const forward = models::jit_forward(model);
  (void)forward(tokens);  // plans every block and records the forward
  std::string const program = forward.explain(tokens);  // runs nothing: the recorded program
  std::cout << "the forward is one jitted call, " << program.substr(0, program.find('\n'))
            << "\nMegatron: 2 all-reduces per block over 'mp', 1 for the vocabulary-parallel embedding\n";
  time_forward(forward, tokens);
  return 0;
}

template <class T>
int main_for(int argc, char* argv[]) {
  using namespace tessel;
  // TESSEL_GPT2_STAGES=2: the blocks in 2 pipeline stages over 'pp' of a (dp 2, pp 2, mp 2) mesh.
  char const* env = std::getenv("TESSEL_GPT2_STAGES");
  int const stages = env ? std::atoi(env) : 1;
  if (stages < 1 || 8 % stages != 0 || 8 / stages < 2) {
    std::cerr << "TESSEL_GPT2_STAGES=" << env << ": give 1, 2 or 4 stages (of the 8 devices: dp 2 x pp x mp)\n";
    return 2;
  }
  auto mesh = stages == 1 ? make_mesh({2, 4}, {"dp", "mp"})
                          : make_mesh({2, stages, 4 / stages}, {"dp", "pp", "mp"});
  int const microbatches = stages == 1 ? 0 : 2 * stages;
  if (argc >= 3) {
    SafetensorsFile file(argv[1]);
    return run(models::load_gpt2<T>(file, mesh, std::stoll(argv[2])), 8, 64, microbatches);
  }
  models::Gpt2Config small{.vocab = 50257, .positions = 1024, .embd = 768, .heads = 12, .layers = 4};
  return run(models::random_gpt2<T>(small, mesh), 8, 128, microbatches);
}

}  // namespace

int main(int argc, char* argv[]) {
  tessel::ScopeGuard guard(argc, argv);
  tessel::set_device_count(8);
  char const* dtype = std::getenv("TESSEL_GPT2_DTYPE");
  if (dtype && std::string(dtype) == "bfloat16") return main_for<tessel::bfloat16>(argc, argv);
  return main_for<float>(argc, argv);
}
