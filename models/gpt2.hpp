#pragma once
// GPT-2 as Hugging Face's GPT2LMHeadModel computes it (pre-norm blocks, gelu_new, LayerNorm with
// a two-pass variance, the LM head tied to the token embedding), with weights from its
// safetensors file, laid out for Megatron tensor parallelism over a mesh axis `mp` and data
// parallelism over `dp`: attention heads and the MLP's hidden dimension split over mp (so each
// block needs one all-reduce after attention and one after the MLP), the vocabulary split over mp
// in the embedding and the logits, the batch over dp. Shared by examples/example_gpt2.cpp, its
// test (tests/models/test_gpt2.cpp), the benchmarks bench_gpt2 and bench_dispatch,
// tests/plan/test_xla_parity.cpp and the pipelined forward (models/gpt2_pipeline.hpp).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <format>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tessel/tessel.hpp"
#include "tessel/tools/safetensors.hpp"

namespace tessel::models {

struct Gpt2Config {
  std::int64_t vocab = 0, positions = 0, embd = 0, heads = 0, layers = 0;
  double epsilon = 1e-5;
  [[nodiscard]] std::int64_t head_dim() const { return embd / heads; }
};

// The weights of one block, in the layouts the forward reads: q, k, v projections as (embd, heads,
// head_dim), the output projection as (heads, head_dim, embd).
template <class T>
struct Gpt2Block {
  Tensor<T> ln1_g, ln1_b, wq, wk, wv, bq, bk, bv, wo, bo, ln2_g, ln2_b, w_fc, b_fc, w_proj, b_proj;
};

template <class T>
struct Gpt2 {
  Gpt2Config config;
  Mesh mesh;
  Tensor<T> wte, wpe, lnf_g, lnf_b;
  std::vector<Gpt2Block<T>> blocks;
};

// The shardings of the Megatron layout on a mesh with axes named dp and mp.
struct Gpt2Shardings {
  NamedSharding replicated, batch, vocab_rows, heads_cols, head_bias, heads_rows, hidden_cols, hidden_bias, hidden_rows;
  explicit Gpt2Shardings(Mesh const& m)
      : replicated(m, P()),
        batch(m, P("dp")),
        vocab_rows(m, P("mp", None)),
        heads_cols(m, P(None, "mp", None)),
        head_bias(m, P("mp", None)),
        heads_rows(m, P("mp", None, None)),
        hidden_cols(m, P(None, "mp")),
        hidden_bias(m, P("mp")),
        hidden_rows(m, P("mp", None)) {}
};

// The prefix of a file's GPT-2 tensor names: GPT2LMHeadModel saves "transformer.wte.weight",
// GPT2Model (and the hub's openai-community/gpt2 model.safetensors) "wte.weight".
inline std::string gpt2_prefix(SafetensorsFile const& file) {
  return file.contains("wte.weight") && !file.contains("transformer.wte.weight") ? "" : "transformer.";
}

// Loads GPT-2 from `file` (tensor names as Hugging Face writes them, under `prefix`: by default
// whichever of the two the file uses) onto `mesh` (axes dp and mp). The file gives every size but
// the number of heads. Tensors stored whole are read straight into their shards; c_attn, stored
// as (embd, 3 embd) with q, k, v side by side, is read replicated and cut into the three
// head-split projections.
template <class T>
Gpt2<T> load_gpt2(SafetensorsFile const& file, Mesh const& mesh, std::int64_t heads,
                  std::optional<std::string> const& name_prefix = std::nullopt) {
  std::string const prefix = name_prefix ? *name_prefix : gpt2_prefix(file);
  Gpt2Shardings s(mesh);
  Gpt2<T> m{{}, mesh, {}, {}, {}, {}, {}};
  auto const& wte = file.entry(prefix + "wte.weight");
  auto const& wpe = file.entry(prefix + "wpe.weight");
  Gpt2Config& c = m.config;
  c.vocab = wte.shape[0];
  c.embd = wte.shape[1];
  c.positions = wpe.shape[0];
  c.heads = heads;
  while (file.contains(std::format("{}h.{}.ln_1.weight", prefix, c.layers))) ++c.layers;
  if (heads <= 0 || c.embd % heads != 0)
    throw Error(std::format("load_gpt2: {} heads do not divide n_embd {}", heads, c.embd));
  std::int64_t const e = c.embd, h = c.heads, d = c.head_dim();
  auto load = [&](std::string const& name, NamedSharding const& sh, Shape const& shape) {
    return file.load<T>(prefix + name, sh, shape);
  };
  m.wte = load("wte.weight", s.vocab_rows, {c.vocab, e});
  m.wpe = load("wpe.weight", s.replicated, {c.positions, e});
  m.lnf_g = load("ln_f.weight", s.replicated, {e});
  m.lnf_b = load("ln_f.bias", s.replicated, {e});
  for (std::int64_t l = 0; l < c.layers; ++l) {
    std::string const b = std::format("h.{}.", l);
    Gpt2Block<T> blk;
    blk.ln1_g = load(b + "ln_1.weight", s.replicated, {e});
    blk.ln1_b = load(b + "ln_1.bias", s.replicated, {e});
    auto qkv = load(b + "attn.c_attn.weight", s.replicated, {e, 3 * e});
    auto qkv_b = load(b + "attn.c_attn.bias", s.replicated, {3 * e});
    auto part = [&](int k) { return eval(reshape(slice_in_dim(qkv, k * e, (k + 1) * e, 1), {e, h, d}), s.heads_cols); };
    auto bias = [&](int k) { return eval(reshape(slice_in_dim(qkv_b, k * e, (k + 1) * e, 0), {h, d}), s.head_bias); };
    blk.wq = part(0), blk.wk = part(1), blk.wv = part(2);
    blk.bq = bias(0), blk.bk = bias(1), blk.bv = bias(2);
    blk.wo = eval(reshape(load(b + "attn.c_proj.weight", s.replicated, {e, e}), {h, d, e}), s.heads_rows);
    blk.bo = load(b + "attn.c_proj.bias", s.replicated, {e});
    blk.ln2_g = load(b + "ln_2.weight", s.replicated, {e});
    blk.ln2_b = load(b + "ln_2.bias", s.replicated, {e});
    blk.w_fc = load(b + "mlp.c_fc.weight", s.hidden_cols, {e, 4 * e});
    blk.b_fc = load(b + "mlp.c_fc.bias", s.hidden_bias, {4 * e});
    blk.w_proj = load(b + "mlp.c_proj.weight", s.hidden_rows, {4 * e, e});
    blk.b_proj = load(b + "mlp.c_proj.bias", s.replicated, {e});
    m.blocks.push_back(std::move(blk));
  }
  return m;
}

// A GPT-2 of the given sizes with random weights (normal, std 0.02, as GPT-2 initializes; LayerNorm
// scales 1, biases 0), drawn directly in the Megatron layout: the same values on any mesh.
template <class T>
Gpt2<T> random_gpt2(Gpt2Config const& c, Mesh const& mesh, std::uint32_t seed = 0) {
  Gpt2Shardings s(mesh);
  Gpt2<T> m{c, mesh, {}, {}, {}, {}, {}};
  std::int64_t const e = c.embd, h = c.heads, d = c.head_dim();
  std::uint32_t key = seed * 1000;
  auto normal = [&](Shape const& shape, NamedSharding const& sh) {
    return Tensor<T>(random::normal<T>(PRNGKey(key++), shape, sh) * 0.02f);
  };
  auto constant = [&](Shape const& shape, float v, NamedSharding const& sh) {
    return make_array_from_callback<T>(shape, sh, [v](Box const&, std::span<T> block) {
      std::fill(block.begin(), block.end(), T(v));
    });
  };
  m.wte = normal({c.vocab, e}, s.vocab_rows);
  m.wpe = normal({c.positions, e}, s.replicated);
  m.lnf_g = constant({e}, 1, s.replicated);
  m.lnf_b = constant({e}, 0, s.replicated);
  for (std::int64_t l = 0; l < c.layers; ++l) {
    Gpt2Block<T> b;
    b.ln1_g = constant({e}, 1, s.replicated), b.ln1_b = constant({e}, 0, s.replicated);
    b.wq = normal({e, h, d}, s.heads_cols), b.wk = normal({e, h, d}, s.heads_cols), b.wv = normal({e, h, d}, s.heads_cols);
    b.bq = constant({h, d}, 0, s.head_bias), b.bk = constant({h, d}, 0, s.head_bias), b.bv = constant({h, d}, 0, s.head_bias);
    b.wo = normal({h, d, e}, s.heads_rows);
    b.bo = constant({e}, 0, s.replicated);
    b.ln2_g = constant({e}, 1, s.replicated), b.ln2_b = constant({e}, 0, s.replicated);
    b.w_fc = normal({e, 4 * e}, s.hidden_cols);
    b.b_fc = constant({4 * e}, 0, s.hidden_bias);
    b.w_proj = normal({4 * e, e}, s.hidden_rows);
    b.b_proj = constant({e}, 0, s.replicated);
    m.blocks.push_back(std::move(b));
  }
  return m;
}

namespace gpt2 {

// gelu_new (Hugging Face's name for the tanh approximation; tessel's gelu is that one, as flax's).
// Attention: q, k, v of (batch, seq, heads, head_dim), the causal mask from iota fused into the
// softmax. Its output projection before the bias: a sum over the heads the caller's weights hold
// (all of them, or one device's share inside shard_map, which then psums it over mp).
inline constexpr auto attention_heads = [](auto const& x, auto const& g, auto const& b, auto const& wq, auto const& wk,
                                           auto const& wv, auto const& bq, auto const& bk, auto const& bv,
                                           auto const& wo, double epsilon) {
  DotDims project{{2}, {0}, {}, {}};     // (b, s, e) . (e, h, d) -> (b, s, h, d)
  DotDims qk{{3}, {3}, {0, 2}, {0, 2}};  // -> (b, h, s_q, s_k)
  DotDims pv{{3}, {1}, {0, 1}, {0, 2}};  // -> (b, h, s_q, d)
  DotDims out{{1, 3}, {0, 1}, {}, {}};   // (b, h, s, d) . (h, d, e) -> (b, s, e)
  auto n = layer_norm_two_pass(x, g, b, epsilon);
  auto q = dot_general(n, wq, project) + bq, k = dot_general(n, wk, project) + bk, v = dot_general(n, wv, project) + bv;
  Shape const &xs = x.shape(), &ws = wq.shape();
  auto scores = dot_general(q, k, qk) * (1.0f / std::sqrt(static_cast<float>(ws[2])));
  Shape const ss{xs[0], ws[1], xs[1], xs[1]};
  float const ninf = -std::numeric_limits<float>::infinity();
  auto p = softmax(where(iota<std::int32_t>(ss, 2) >= iota<std::int32_t>(ss, 3), scores, ninf), -1);
  return dot_general(dot_general(p, v, pv), wo, out);
};

// The MLP's second GEMM before its bias: a sum over the hidden units the caller's weights hold.
inline constexpr auto mlp_hidden = [](auto const& x, auto const& g, auto const& b, auto const& w_fc, auto const& b_fc,
                                      auto const& w_proj, double epsilon) {
  DotDims dense{{2}, {0}, {}, {}};  // (b, s, e) . (e, f) -> (b, s, f)
  auto hidden = gelu(dot_general(layer_norm_two_pass(x, g, b, epsilon), w_fc, dense) + b_fc);
  return dot_general(hidden, w_proj, dense);
};

inline auto attention_block() {
  return jit([](auto const& x, auto const& g, auto const& b, auto const& wq, auto const& wk, auto const& wv,
                auto const& bq, auto const& bk, auto const& bv, auto const& wo, auto const& bo, double epsilon) {
    return x + (attention_heads(x, g, b, wq, wk, wv, bq, bk, bv, wo, epsilon) + bo);
  });
}

inline auto mlp_block() {
  return jit([](auto const& x, auto const& g, auto const& b, auto const& w_fc, auto const& b_fc, auto const& w_proj,
                auto const& b_proj, double epsilon) {
    return x + (mlp_hidden(x, g, b, w_fc, b_fc, w_proj, epsilon) + b_proj);
  });
}

// Token and position embeddings: take over the vocabulary-parallel table, plus the first seq rows
// of the position table.
inline auto embed() {
  return jit([](auto const& wte, auto const& wpe, auto const& ids) {
    return take(wte, ids) + slice_in_dim(wpe, 0, ids.shape()[1], 0);
  });
}

// ln_f, then the logits against the tied embedding (vocabulary-parallel: the vocab over mp).
inline auto logits() {
  return jit([](auto const& x, auto const& g, auto const& b, auto const& wte, double epsilon) {
    return dot_general(layer_norm_two_pass(x, g, b, epsilon), wte, DotDims{{2}, {1}, {}, {}});
  });
}

}  // namespace gpt2

// The forward: logits (batch, seq, vocab) of int32 token ids (batch, seq), which are put on the
// batch sharding. Each block is one jitted evaluation; jit_forward below makes the whole forward
// one jitted call.
template <class T>
Tensor<T> forward(Gpt2<T> const& m, Tensor<std::int32_t> const& ids) {
  static auto const embed = gpt2::embed();
  static auto const attention = gpt2::attention_block();
  static auto const mlp = gpt2::mlp_block();
  static auto const logits = gpt2::logits();
  double const eps = m.config.epsilon;
  Tensor<std::int32_t> placed = device_put(ids, NamedSharding(m.mesh, P("dp")));
  Tensor<T> x = embed(m.wte, m.wpe, placed);
  for (auto const& b : m.blocks) {
    x = attention(x, b.ln1_g, b.ln1_b, b.wq, b.wk, b.wv, b.bq, b.bk, b.bv, b.wo, b.bo, eps);
    x = mlp(x, b.ln2_g, b.ln2_b, b.w_fc, b.b_fc, b.w_proj, b.b_proj, eps);
  }
  return logits(x, m.lnf_g, m.lnf_b, m.wte, eps);
}

// The whole forward as one jitted call (jax.jit of the forward): recorded on the first call with
// each token shape and sharding, replayed after that without running the forward's C++ again
// (runtime/program.hpp). The model's weights are the program's constants: the model must outlive
// the function, and a model whose weights change needs a new one.
template <class T>
auto jit_forward(Gpt2<T> const& m) {
  return jit([&m](Tensor<std::int32_t> const& ids) { return forward(m, ids); });
}

}  // namespace tessel::models
