#pragma once
// Llama-family decoders as Hugging Face's LlamaForCausalLM computes them (RMSNorm before attention
// and MLP, rotary position embeddings on q and k, grouped-query attention, a SwiGLU MLP, an LM head
// tied to the embedding or not), with weights from its safetensors file. The config fields that
// tell Llama 2/3, Mistral and Qwen2-style models apart are LlamaConfig's: rope theta and Llama
// 3.1's rope scaling, the number
// of key/value heads, a tied head, biases on q, k and v (Qwen2) and on the output projection
// (Llama's attention_bias), read from the file where it says so.
//
// Layout: Megatron tensor parallelism over a mesh axis `mp`, data parallelism over `dp`. Query
// heads, the output projection's rows and the MLP's hidden units are split over mp (one
// all-reduce after attention, one after the MLP, per layer), the vocabulary over mp in the
// embedding and the LM head. Key/value heads are split over mp when mp divides their number (each
// device's query heads meet their KV heads in grouped dots inside attention). When it does not (2 KV
// heads on mp = 4), each KV head's weights are repeated at load time until mp divides them (to 4)
// and split over mp, as Megatron and vLLM give each device the KV heads its query heads share: a
// device computes and caches only those, and attention groups its query heads on them. Either way
// no weight or cache is ever gathered. The KV cache follows the KV projections' layout.
//
// Generation: prefill writes the prompt's keys and values into a preallocated cache with
// dynamic_update_slice and returns its logits; each decode step writes one position and attends
// over the cache with a mask up to it. The position is a run-time scalar: every step runs the
// plans the first one made, and a decode step is one recorded program (jit_decode_step) replayed
// per token. Tokens are picked greedily or drawn (models/sampling.hpp: temperature, top-k, top-p).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <format>
#include <limits>
#include <map>
#include <numbers>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "sampling.hpp"
#include "tessel/tessel.hpp"
#include "tessel/tools/safetensors.hpp"

namespace tessel::models {

struct LlamaConfig {
  // From the file (load_llama fills them): sizes, whether the head is tied, biases on q, k, v.
  std::int64_t vocab = 0, hidden = 0, intermediate = 0, layers = 0, head_dim = 0;
  bool tied_head = false, qkv_bias = false, o_bias = false;
  // From the model's config.json (the file does not hold them).
  std::int64_t heads = 0, kv_heads = 0, max_positions = 2048;
  double rms_eps = 1e-5, rope_theta = 10000.0;
  // rope_scaling of rope_type "llama3" (Llama 3.1 onwards); factor 0: none (rope_type "default").
  struct Llama3RopeScaling {
    double factor = 0, low_freq_factor = 1, high_freq_factor = 4;
    std::int64_t original_max_positions = 8192;
  } rope_scaling{};
};

template <class T>
struct LlamaLayer {
  Tensor<T> attn_norm, wq, wk, wv, bq, bk, bv, wo, bo, mlp_norm, w_gate, w_up, w_down;
};

template <class T>
struct Llama {
  LlamaConfig config;
  Mesh mesh;
  Tensor<T> embed, norm, head;  // head: (vocab, hidden), the embedding itself when tied
  Tensor<T> rope_cos, rope_sin;  // (max_positions, head_dim / 2)
  std::vector<LlamaLayer<T>> layers;
};

// The shardings of the layout above on a mesh with axes dp and mp.
struct LlamaShardings {
  // heads and head_bias: the q, k and v projections' (k and v hold their KV heads repeated when mp
  // does not divide them: kv_repeats).
  NamedSharding replicated, vocab_rows, heads, head_bias, o_rows, hidden_cols, hidden_rows, cache;
  LlamaShardings(Mesh const& m, LlamaConfig const& c)
      : replicated(m, P()),
        vocab_rows(m, P("mp", None)),
        heads(m, P(None, "mp", None)),
        head_bias(m, P("mp", None)),
        o_rows(m, P("mp", None, None)),
        hidden_cols(m, P(None, "mp")),
        hidden_rows(m, P("mp", None)),
        cache(m, P("dp", None, "mp", None)) {}
  // How many times each KV head's weights are repeated: 1 when mp divides the KV heads, else until
  // mp does (lcm(KV heads, mp) heads, each device holding the KV heads its query heads use: 2 KV
  // heads on mp 4 become 4, each serving 2 query heads), or, when that does not divide the query
  // heads, once per query head it serves.
  static std::int64_t kv_repeats(Mesh const& m, LlamaConfig const& c) {
    std::int64_t const mp = m.axis_size("mp");
    if (c.kv_heads % mp == 0) return 1;
    std::int64_t const heads = std::lcm(c.kv_heads, mp);
    return c.heads % heads == 0 ? heads / c.kv_heads : c.heads / c.kv_heads;
  }
};

namespace llama {

template <class T>
Tensor<T> filled(Shape const& shape, float v, NamedSharding const& sharding) {
  return make_array_from_callback<T>(shape, sharding, [v](Box const&, std::span<T> block) {
    std::fill(block.begin(), block.end(), T(v));
  });
}
template <class T>
Tensor<T> zeros(Shape const& shape, NamedSharding const& sharding) {
  return filled<T>(shape, 0.0f, sharding);
}

inline void check_config(LlamaConfig const& c) {
  if (c.heads <= 0 || c.kv_heads <= 0 || c.heads % c.kv_heads != 0)
    throw Error(std::format("llama: {} query heads are not a multiple of {} key/value heads", c.heads, c.kv_heads));
  if (c.head_dim <= 0 || c.head_dim % 2 != 0)
    throw Error(std::format("llama: head_dim {} must be even (rotary embeddings rotate pairs)", c.head_dim));
}

// Rotary frequency i as HF computes it in float32: 1 / theta^(2i / head_dim), then Llama 3.1's
// scaling when configured (_compute_llama3_parameters): wavelengths longer than the original
// context / low_freq_factor are divided by the factor, those shorter than the original context /
// high_freq_factor kept, those between interpolated between the two.
inline float rope_frequency(LlamaConfig const& c, std::int64_t i) {
  float const inv = 1.0f / std::pow(static_cast<float>(c.rope_theta), static_cast<float>(2 * i) / static_cast<float>(c.head_dim));
  auto const& r = c.rope_scaling;
  if (r.factor == 0) return inv;
  auto const old_context = static_cast<float>(r.original_max_positions), factor = static_cast<float>(r.factor);
  auto const low = static_cast<float>(r.low_freq_factor);
  float const low_wavelen = static_cast<float>(static_cast<double>(r.original_max_positions) / r.low_freq_factor);
  float const high_wavelen = static_cast<float>(static_cast<double>(r.original_max_positions) / r.high_freq_factor);
  float const wavelen = static_cast<float>(2 * std::numbers::pi) / inv;
  float const scaled = wavelen > low_wavelen ? inv / factor : inv;
  if (wavelen < high_wavelen || wavelen > low_wavelen) return scaled;
  float const smooth = (old_context / wavelen - low) / static_cast<float>(r.high_freq_factor - r.low_freq_factor);
  return (1 - smooth) * scaled / factor + smooth * scaled;
}

// Hugging Face's rotary tables: angle = position * inv_freq in float32 (cat(freqs, freqs) makes
// both halves of cos and sin alike, so one half is kept), rounded to the model's dtype as HF rounds
// them to the queries'.
template <class T>
std::pair<Tensor<T>, Tensor<T>> rope_tables(LlamaConfig const& c, NamedSharding const& sharding) {
  std::int64_t const half = c.head_dim / 2;
  auto table = [&](bool sine) {
    return make_array_from_callback<T>(Shape{c.max_positions, half}, sharding, [&](Box const& box, std::span<T> block) {
      std::size_t k = 0;
      for (std::int64_t p = box[0].start; p < box[0].stop; ++p)
        for (std::int64_t i = box[1].start; i < box[1].stop; ++i) {
          float const angle = static_cast<float>(p) * rope_frequency(c, i);
          block[k++] = T(sine ? std::sin(angle) : std::cos(angle));
        }
    });
  };
  return {table(false), table(true)};
}

// A 16-bit model computes as Hugging Face's does where that differs from JAX's arithmetic (every op
// rounded to the model's type): its RMSNorm normalizes in float32 and rounds once before the
// weight, its SiLU computes in float32 and rounds once, and attention's softmax runs in float32
// (softmax(dtype=float32)). Its logits come closer to HF's, and each rounding left out saves a few
// instructions per element. A float32 model uses the library's rms_norm, sigmoid and softmax.
template <class X>
constexpr bool half_model = sizeof(expr_value_t<X>) == 2;

inline constexpr auto norm = [](auto const& x, auto const& w, double eps) {
  if constexpr (half_model<decltype(x)>) {
    auto const x32 = astype<float>(x);
    return w * astype<expr_value_t<decltype(x)>>(x32 * rsqrt(mean(square(x32), -1, true) + eps));
  } else {
    return rms_norm(x, w, eps);
  }
};

inline constexpr auto silu = [](auto const& g) {
  if constexpr (half_model<decltype(g)>) {
    auto const g32 = astype<float>(g);
    return astype<expr_value_t<decltype(g)>>(g32 / (1.0f + exp(-g32)));  // (PyTorch's silu, in float)
  } else {
    return g * sigmoid(g);
  }
};

// softmax along the last axis (attention's probabilities).
inline constexpr auto probabilities = [](auto const& scores) {
  using S = expr_value_t<decltype(scores)>;
  if constexpr (half_model<decltype(scores)>) return astype<S>(softmax(astype<float>(scores), -1));
  else return softmax(scores, -1);
};

// Rotary embedding of x (batch, seq, heads, head_dim) at the positions whose cos and sin rows are
// c and s (seq, 1, head_dim / 2): HF's x * cos + rotate_half(x) * sin, rotate_half(x) = [-x2, x1].
// x is viewed as (batch, seq, heads, 2, half) and each element computed where it is written, from
// itself and its partner in the other half: x c + partner (-s or s). The product with -s is the
// product with s negated, so each product and sum is HF's: [x1 c - x2 s, x2 c + x1 s]. Three ops
// per element; the where picks operands (no rounding in a 16-bit model, runtime/kernel_op.hpp).
inline constexpr auto rotate = [](auto const& x, auto const& c, auto const& s) {
  Shape const xs = x.shape();
  std::int64_t const h = xs[3] / 2;
  Shape const halves{xs[0], xs[1], xs[2], 2, h};
  auto xh = reshape(x, halves);
  auto first = iota<std::int32_t>(halves, 3) == 0;
  auto partner = where(first, slice_in_dim(xh, 1, 2, 3), slice_in_dim(xh, 0, 1, 3));
  auto cr = reshape(c, {c.shape()[0], 1, 1, h}), sr = reshape(s, {s.shape()[0], 1, 1, h});
  return reshape(xh * cr + partner * where(first, -sr, sr), xs);
};

// Rows [offset, offset + seq) of a rotary table as (seq, 1, head_dim / 2).
inline constexpr auto rope_rows = [](auto const& table, auto const& offset, std::int64_t seq) {
  return reshape(lax::dynamic_slice_in_dim(table, offset, seq, 0), {seq, 1, table.shape()[1]});
};

// The scaled scores where `visible`, else -inf. softmax reads them in three passes (max, sum,
// result): in a 16-bit type each pass would scale and mask them again, rounding after each op, so
// they are made once (bf16 prefill's trace: 1.85 -> 1.46 ms per forward); float32 computes them
// again for less than a pass costs (0.96 against 1.04 ms).
inline constexpr auto masked = [](auto const& visible, auto const& scores) {
  auto m = where(visible, scores, -std::numeric_limits<float>::infinity());
  if constexpr (half_model<decltype(scores)>) return Tensor<expr_value_t<decltype(scores)>>(m);
  else return m;
};

// Queries at positions offset + i attend to keys at positions j <= offset + i. q (b, s, H, d);
// k, v (b, t, H, d) -> (b, H, s, d).
inline constexpr auto attend_heads = [](auto const& q, auto const& k, auto const& v, auto const& offset) {
  DotDims qk{{3}, {3}, {0, 2}, {0, 2}};  // -> (b, H, s, t)
  DotDims pv{{3}, {1}, {0, 1}, {0, 2}};  // (b, H, s, t) . (b, t, H, d) -> (b, H, s, d)
  auto scores = dot_general(q, k, qk) * (1.0 / std::sqrt(static_cast<double>(q.shape()[3])));
  Shape const ss = scores.shape();
  auto visible = iota<std::int32_t>(ss, 3) <= iota<std::int32_t>(ss, 2) + offset;
  return dot_general(probabilities(masked(visible, scores)), v, pv);
};

// The same with k and v holding fewer (KV) heads, each serving its group of query heads (HF's
// repeat_kv, without its copies): the queries are viewed as (b, s, KV, G, d) and each KV head meets
// its G query heads in one batched dot, as JAX's grouped einsum does. Repeating k and v instead
// copied the whole cache G times in every decode step. Local to each device when mp splits the KV
// heads (a reshape of the heads split over mp keeps the split on the KV dimension).
template <class T, class Q, class K, class V, class Offset>
Tensor<T> attend(Q const& q, K const& k, V const& v, Offset const& offset) {
  Shape const qs = q.shape();
  std::int64_t const kv = k.shape()[2], group = qs[2] / kv;
  if (group == 1) return attend_heads(q, k, v, offset);
  auto grouped = reshape(q, {qs[0], qs[1], kv, group, qs[3]});
  DotDims qk{{4}, {3}, {0, 2}, {0, 2}};  // -> (b, KV, s, G, t)
  DotDims pv{{4}, {1}, {0, 1}, {0, 2}};  // (b, KV, s, G, t) . (b, t, KV, d) -> (b, KV, s, G, d)
  auto scores = dot_general(grouped, k, qk) * (1.0 / std::sqrt(static_cast<double>(qs[3])));
  Shape const ss = scores.shape();
  auto visible = iota<std::int32_t>(ss, 4) <= iota<std::int32_t>(ss, 2) + offset;
  auto out = dot_general(probabilities(masked(visible, scores)), v, pv);
  return Tensor<T>(reshape(transpose(out, {0, 1, 3, 2, 4}), {qs[0], qs[2], qs[1], qs[3]}));  // (b, H, s, d)
}

// The output projection (b, H, s, d) . (H, d, e) -> (b, s, e): a sum over the heads each device holds.
inline constexpr auto project_out = [](auto const& heads, auto const& wo) {
  return dot_general(heads, wo, DotDims{{1, 3}, {0, 1}, {}, {}});
};

// The SwiGLU MLP after its norm: down(silu(gate(x)) * up(x)).
inline constexpr auto mlp = [](auto const& x, auto const& g, auto const& w_gate, auto const& w_up, auto const& w_down,
                               double eps) {
  DotDims dense{{2}, {0}, {}, {}};
  auto n = norm(x, g, eps);
  return dot_general(silu(dot_general(n, w_gate, dense)) * dot_general(n, w_up, dense), w_down, dense);
};

}  // namespace llama

// Loads a Llama-family model from `file` (Hugging Face's tensor names) onto `mesh` (axes dp and mp).
// `config` gives what the file does not: heads, kv_heads, rms_eps, rope_theta, rope_scaling,
// max_positions. The sizes, a tied head (no lm_head.weight) and q/k/v biases come from the file. PyTorch's Linear
// weights, stored (out, in), are transposed into the layouts the forward reads.
template <class T>
Llama<T> load_llama(SafetensorsFile const& file, Mesh const& mesh, LlamaConfig config) {
  LlamaConfig& c = config;
  auto const& embed = file.entry("model.embed_tokens.weight");
  c.vocab = embed.shape[0];
  c.hidden = embed.shape[1];
  c.intermediate = file.entry("model.layers.0.mlp.gate_proj.weight").shape[0];
  c.layers = 0;
  while (file.contains(std::format("model.layers.{}.input_layernorm.weight", c.layers))) ++c.layers;
  if (c.heads <= 0) throw Error("load_llama: the config must give the number of attention heads");
  c.head_dim = file.entry("model.layers.0.self_attn.q_proj.weight").shape[0] / c.heads;
  c.tied_head = !file.contains("lm_head.weight");
  c.qkv_bias = file.contains("model.layers.0.self_attn.q_proj.bias");
  c.o_bias = file.contains("model.layers.0.self_attn.o_proj.bias");
  llama::check_config(c);
  LlamaShardings s(mesh, c);
  std::int64_t const e = c.hidden, h = c.heads, kv = c.kv_heads, d = c.head_dim, f = c.intermediate;
  auto load = [&](std::string const& name, NamedSharding const& sh, Shape const& shape) {
    return file.load<T>(name, sh, shape);
  };
  // A Linear weight (out, in) as (in, out...) in the given sharding.
  auto linear = [&](std::string const& name, Shape const& stored, Shape const& as, NamedSharding const& sh) {
    return eval(reshape(transpose(load(name, s.replicated, stored)), as), sh);
  };
  auto bias = [&](std::string const& name, std::int64_t n, NamedSharding const& sh) {
    if (!c.qkv_bias) return llama::zeros<T>(Shape{n, d}, sh);
    return eval(reshape(load(name, s.replicated, {n * d}), {n, d}), sh);
  };
  std::int64_t const repeats = LlamaShardings::kv_repeats(mesh, c);
  auto kv_heads = [&](Tensor<T> const& w, int axis) {
    return eval(repeat(w, repeats, axis), axis == 0 ? s.head_bias : s.heads);
  };
  Llama<T> m{c, mesh, {}, {}, {}, {}, {}, {}};
  m.embed = load("model.embed_tokens.weight", s.vocab_rows, {c.vocab, e});
  m.norm = load("model.norm.weight", s.replicated, {e});
  m.head = c.tied_head ? m.embed : load("lm_head.weight", s.vocab_rows, {c.vocab, e});
  std::tie(m.rope_cos, m.rope_sin) = llama::rope_tables<T>(c, s.replicated);
  for (std::int64_t l = 0; l < c.layers; ++l) {
    std::string const p = std::format("model.layers.{}.", l);
    LlamaLayer<T> y;
    y.attn_norm = load(p + "input_layernorm.weight", s.replicated, {e});
    y.wq = linear(p + "self_attn.q_proj.weight", {h * d, e}, {e, h, d}, s.heads);
    y.wk = kv_heads(linear(p + "self_attn.k_proj.weight", {kv * d, e}, {e, kv, d}, s.replicated), 1);
    y.wv = kv_heads(linear(p + "self_attn.v_proj.weight", {kv * d, e}, {e, kv, d}, s.replicated), 1);
    y.bq = bias(p + "self_attn.q_proj.bias", h, s.head_bias);
    y.bk = kv_heads(bias(p + "self_attn.k_proj.bias", kv, s.replicated), 0);
    y.bv = kv_heads(bias(p + "self_attn.v_proj.bias", kv, s.replicated), 0);
    y.wo = linear(p + "self_attn.o_proj.weight", {e, h * d}, {h, d, e}, s.o_rows);
    y.bo = c.o_bias ? load(p + "self_attn.o_proj.bias", s.replicated, {e}) : llama::zeros<T>(Shape{e}, s.replicated);
    y.mlp_norm = load(p + "post_attention_layernorm.weight", s.replicated, {e});
    y.w_gate = linear(p + "mlp.gate_proj.weight", {f, e}, {e, f}, s.hidden_cols);
    y.w_up = linear(p + "mlp.up_proj.weight", {f, e}, {e, f}, s.hidden_cols);
    y.w_down = linear(p + "mlp.down_proj.weight", {e, f}, {f, e}, s.hidden_rows);
    m.layers.push_back(std::move(y));
  }
  return m;
}

// A model of the config's sizes (vocab, hidden, intermediate, layers, heads, kv_heads, head_dim)
// with random weights: normal with std 0.02 (HF's initializer_range), norm weights 1, no biases;
// drawn directly in the layout, the same values on any mesh.
template <class T>
Llama<T> random_llama(LlamaConfig c, Mesh const& mesh, std::uint32_t seed = 0) {
  llama::check_config(c);
  c.qkv_bias = c.o_bias = false;
  LlamaShardings s(mesh, c);
  std::int64_t const e = c.hidden, h = c.heads, kv = c.kv_heads, d = c.head_dim, f = c.intermediate;
  std::uint32_t key = seed * 1000;
  auto normal = [&](Shape const& shape, NamedSharding const& sh) {
    return Tensor<T>(random::normal<T>(PRNGKey(key++), shape, sh) * 0.02f);
  };
  auto constant = [](Shape const& shape, float v, NamedSharding const& sh) { return llama::filled<T>(shape, v, sh); };
  std::int64_t const repeats = LlamaShardings::kv_repeats(mesh, c);
  auto kv_heads = [&](Tensor<T> const& w) { return eval(repeat(w, repeats, 1), s.heads); };
  Llama<T> m{c, mesh, {}, {}, {}, {}, {}, {}};
  m.embed = normal({c.vocab, e}, s.vocab_rows);
  m.norm = constant({e}, 1, s.replicated);
  m.head = c.tied_head ? m.embed : normal({c.vocab, e}, s.vocab_rows);
  std::tie(m.rope_cos, m.rope_sin) = llama::rope_tables<T>(c, s.replicated);
  for (std::int64_t l = 0; l < c.layers; ++l) {
    LlamaLayer<T> y;
    y.attn_norm = constant({e}, 1, s.replicated);
    y.wq = normal({e, h, d}, s.heads);
    y.wk = kv_heads(normal({e, kv, d}, s.replicated)), y.wv = kv_heads(normal({e, kv, d}, s.replicated));
    y.bq = constant({h, d}, 0, s.head_bias);
    y.bk = constant({kv * repeats, d}, 0, s.head_bias), y.bv = constant({kv * repeats, d}, 0, s.head_bias);
    y.wo = normal({h, d, e}, s.o_rows);
    y.bo = constant({e}, 0, s.replicated);
    y.mlp_norm = constant({e}, 1, s.replicated);
    y.w_gate = normal({e, f}, s.hidden_cols), y.w_up = normal({e, f}, s.hidden_cols);
    y.w_down = normal({f, e}, s.hidden_rows);
    m.layers.push_back(std::move(y));
  }
  return m;
}

// Preallocated keys and values, (batch, max_len, KV heads as the weights hold them, head_dim) per
// layer, split over mp (LlamaShardings::cache): kv[2 l] holds layer l's keys, kv[2 l + 1] its values; `length`
// positions are filled.
template <class T>
struct KvCache {
  std::vector<Tensor<T>> kv;
  std::int64_t length = 0;
};

template <class T>
KvCache<T> make_cache(Llama<T> const& m, std::int64_t batch, std::int64_t max_len) {
  LlamaConfig const& c = m.config;
  if (max_len > c.max_positions)
    throw Error(std::format("make_cache: {} positions, more than the model's rotary table holds ({})", max_len,
                            c.max_positions));
  LlamaShardings s(m.mesh, c);
  KvCache<T> cache;
  for (std::int64_t l = 0; l < 2 * c.layers; ++l)
    cache.kv.push_back(llama::zeros<T>(
        Shape{batch, max_len, c.kv_heads * LlamaShardings::kv_repeats(m.mesh, c), c.head_dim}, s.cache));
  return cache;
}

namespace llama {
// Positions a step's attention windows are rounded up to (generate's default).
inline constexpr std::int64_t window_granule = 128;

// How many cache positions a step whose last query is at `last` attends over: the positions up to
// it, rounded up to a multiple of `granule`, at most the cache's `room`. Attention then reads that
// much of the cache, not all of it, and a generation makes one decode program per granule of
// positions (replayed until the next), as JAX users bucket a static-cache decode.
constexpr std::int64_t attention_window(std::int64_t last, std::int64_t room, std::int64_t granule = window_granule) {
  std::int64_t const window = (last / granule + 1) * granule;
  return window < room ? window : room;
}

// The forward of token ids (batch, seq) at positions offset + [0, seq), where offset is a C++ int
// or a 0-d int32 tensor (a recorded decode step's argument). With caches (KvCache::kv's layout),
// the new keys and values are written into them and attention reads them up to each position;
// without, attention reads the sequence's own keys. logits_to_keep > 0: the logits of the last
// that many positions only (HF's logits_to_keep: a prefill needs the last one, and the LM head is
// the largest GEMM of a short sequence's forward). window > 0: attention reads the caches' first
// `window` positions only (attention_window: they must hold every position a query sees), else
// all of them.
template <class T, class Offset>
Tensor<T> forward_at(Llama<T> const& m, Tensor<std::int32_t> const& ids, Offset const& offset,
                     std::vector<Tensor<T>>* caches, std::int64_t logits_to_keep = 0, std::int64_t window = 0) {
  LlamaConfig const& c = m.config;
  double const eps = c.rms_eps;
  std::int64_t const seq = ids.shape()[1];
  Tensor<std::int32_t> placed = device_put(ids, NamedSharding(m.mesh, P("dp")));
  Tensor<T> x = take(m.embed, placed);
  Tensor<T> cos = rope_rows(m.rope_cos, offset, seq), sin = rope_rows(m.rope_sin, offset, seq);
  for (std::size_t l = 0; l < m.layers.size(); ++l) {
    LlamaLayer<T> const& y = m.layers[l];
    Tensor<T> n = norm(x, y.attn_norm, eps);
    // q, k and v with their biases where the model has them (Qwen2). Llama's have none: adding its
    // zero biases cost a pass over each projection (and turned a -0 into +0, which HF's Linear
    // without a bias does not).
    auto heads = [&](Tensor<T> const& w, Tensor<T> const& b, bool rotated) {
      auto const plain = dot_general(n, w, DotDims{{2}, {0}, {}, {}});  // (b, s, e) . (e, h, d) -> (b, s, h, d)
      if (c.qkv_bias) return rotated ? Tensor<T>(rotate(plain + b, cos, sin)) : Tensor<T>(plain + b);
      return rotated ? Tensor<T>(rotate(plain, cos, sin)) : Tensor<T>(plain);
    };
    Tensor<T> q = heads(y.wq, y.bq, true), k = heads(y.wk, y.bk, true), v = heads(y.wv, y.bv, false);
    // The residual after attention, with the output projection's bias where the model has one.
    auto attended = [&](Tensor<T> const& a) {
      return c.o_bias ? Tensor<T>(x + (project_out(a, y.wo) + y.bo)) : Tensor<T>(x + project_out(a, y.wo));
    };
    if (caches) {
      Tensor<T>& kc = (*caches)[2 * l];
      Tensor<T>& vc = (*caches)[2 * l + 1];
      kc = lax::dynamic_update_slice_in_dim(kc, k, offset, 1);
      vc = lax::dynamic_update_slice_in_dim(vc, v, offset, 1);
      if (window > 0 && window < kc.shape()[1]) {
        auto const seen = [&](Tensor<T> const& c) { return slice_in_dim(c, 0, window, 1); };
        x = attended(attend<T>(q, seen(kc), seen(vc), offset));
      } else {
        x = attended(attend<T>(q, kc, vc, offset));
      }
    } else {
      x = attended(attend<T>(q, k, v, offset));
    }
    x = x + mlp(x, y.mlp_norm, y.w_gate, y.w_up, y.w_down, eps);
  }
  if (logits_to_keep > 0 && logits_to_keep < seq) x = Tensor<T>(slice_in_dim(x, seq - logits_to_keep, seq, 1));
  return dot_general(norm(x, m.norm, eps), m.head, DotDims{{2}, {1}, {}, {}});
}
}  // namespace llama

// The forward of token ids (batch, seq): logits (batch, seq, vocab), or of the last logits_to_keep
// positions when it is > 0. With a cache, at positions cache.length + [0, seq): the new keys and
// values are written into it, attention reads its positions up to the last rounded up to a
// multiple of `granule` (llama::attention_window), and length advances.
template <class T>
Tensor<T> forward(Llama<T> const& m, Tensor<std::int32_t> const& ids, KvCache<T>* cache = nullptr,
                  std::int64_t logits_to_keep = 0, std::int64_t granule = llama::window_granule) {
  if (cache == nullptr)
    return llama::forward_at(m, ids, 0, static_cast<std::vector<Tensor<T>>*>(nullptr), logits_to_keep);
  std::int64_t const seq = ids.shape()[1], room = cache->kv.empty() ? 0 : cache->kv[0].shape()[1];
  if (cache->length + seq > room)
    throw Error(std::format("llama forward: positions {}..{} run past the cache's {}", cache->length,
                            cache->length + seq - 1, room));
  Tensor<T> logits = llama::forward_at(m, ids, static_cast<int>(cache->length), &cache->kv, logits_to_keep,
                                       llama::attention_window(cache->length + seq - 1, room, granule));
  cache->length += seq;
  return logits;
}

// One decode step as one recorded program, replayed per token (jax.jit of a step function): the
// step's token ids (batch, 1), its position as a 0-d int32 tensor and the caches (KvCache::kv) in;
// the logits, then the new caches, out. Every position replays the program the first call made.
// window > 0: attention reads the caches' first `window` positions, so the step serves positions
// below it (llama::attention_window); 0: all of them.
template <class T>
auto jit_decode_step(Llama<T> const& m, std::int64_t window = 0) {
  return jit([&m, window](Tensor<std::int32_t> const& ids, Tensor<std::int32_t> const& position,
                          std::vector<Tensor<T>> const& caches) {
    std::vector<Tensor<T>> kv(caches);
    Tensor<T> logits = llama::forward_at(m, ids, position, &kv, 0, window);
    kv.insert(kv.begin(), logits);
    return kv;
  });
}

// Generation: prefill the prompt (batch, prompt_len), then `steps` - 1 decode steps, each feeding
// back the token picked from the last logits. Returns the new tokens (batch, steps). The cache's
// tensors are donated (runtime/donate.hpp): each layer's cache takes the new positions in place,
// so a copy of one taken before the call sees them too. Attention reads the cache up to the
// position rounded up to a multiple of `granule`: one recorded decode step per window.
template <class T>
Tensor<std::int32_t> generate(Llama<T> const& m, Tensor<std::int32_t> const& prompt, std::int64_t steps,
                              KvCache<T>& cache, Sampling const& sampling = {},
                              std::int64_t granule = llama::window_granule) {
  std::int64_t const batch = prompt.shape()[0], len = prompt.shape()[1];
  if (cache.length + len + steps - 1 > (cache.kv.empty() ? 0 : cache.kv[0].shape()[1]))
    throw Error(std::format("generate: {} prompt and {} new positions run past the cache's {}", len, steps,
                            cache.kv.empty() ? 0 : cache.kv[0].shape()[1]));
  std::int64_t const room = cache.kv.empty() ? 0 : cache.kv[0].shape()[1];
  // Decode steps by attention window: each recorded by its first position, replayed by the others.
  std::map<std::int64_t, decltype(jit_decode_step(m))> step_by_window;
  std::vector<std::int32_t> out(static_cast<std::size_t>(batch * steps));
  donate(cache.kv);
  Tensor<T> logits = forward(m, prompt, &cache, 1, granule);  // the prompt's last logits only
  NamedSharding const whole(m.mesh, P());
  for (std::int64_t t = 0; t < steps; ++t) {
    Tensor<std::int32_t> next = pick_token(logits, sampling, static_cast<std::uint32_t>(t));  // (batch, 1)
    auto host = process_allgather(next);  // every process picks the same tokens
    for (std::int64_t b = 0; b < batch; ++b) out[static_cast<std::size_t>(b * steps + t)] = host[static_cast<std::size_t>(b)];
    if (t + 1 == steps) break;
    auto position = device_put(std::vector<std::int32_t>{static_cast<std::int32_t>(cache.length)}, Shape{}, whole);
    // Donated: the step writes the position into the caches in place (the results that replace
    // them hold the same buffers), so its work does not grow with the cache.
    std::int64_t const window = llama::attention_window(cache.length, room, granule);
    auto step = step_by_window.find(window);
    if (step == step_by_window.end()) step = step_by_window.emplace(window, jit_decode_step(m, window)).first;
    auto results = step->second(next, position, donate(cache.kv));
    logits = results.front();
    std::copy(results.begin() + 1, results.end(), cache.kv.begin());
    ++cache.length;
  }
  return device_put(out, Shape{batch, steps}, whole);
}

}  // namespace tessel::models
