#pragma once
// Causal self-attention and a pre-norm transformer layer as jitted functions, shared by
// bench_attention.cpp, bench_transformer.cpp and the study's workloads (apps/study/workloads.cpp),
// so that the study times the very expressions the benchmarks do. Shapes come from the arguments.
#include <cmath>
#include <cstdint>
#include <limits>

#include "tessel/tessel.hpp"

namespace tessel::measure {

// softmax(where(query >= key, scores, -inf)) over the last axis: the causal mask from iota, fused
// into the softmax; `s` is (batch, heads, seq, seq).
template <class Scores>
auto causal_softmax(Scores const& scores, Shape const& s) {
  float const ninf = -std::numeric_limits<float>::infinity();
  return softmax(where(iota<std::int32_t>(s, 2) >= iota<std::int32_t>(s, 3), scores, ninf), -1);
}

// softmax(mask(q . k^T / sqrt(d))) . v for q, k, v of (batch, seq, heads, head_dim).
inline auto causal_attention() {
  return jit([](auto const& q, auto const& k, auto const& v) {
    DotDims qk{{3}, {3}, {0, 2}, {0, 2}};  // -> (batch, heads, seq_q, seq_k)
    DotDims pv{{3}, {1}, {0, 1}, {0, 2}};  // -> (batch, heads, seq_q, head_dim)
    Shape const& x = q.shape();
    auto scores = dot_general(q, k, qk) * (1.0f / std::sqrt(static_cast<float>(x[3])));
    return dot_general(causal_softmax(scores, Shape{x[0], x[2], x[1], x[1]}), v, pv);
  });
}

// The transformer layer as two jitted halves (the residual x1 feeds both the second norm and the
// output, so it is a value of its own): attention with its residual, then the MLP with its
// residual. x is (batch, seq, model); wq, wk, wv are (model, heads, head_dim), wo (heads, head_dim,
// model), w1 (model, hidden), w2 (hidden, model).
inline auto attention_half() {
  return jit([](auto const& x, auto const& g1, auto const& b1, auto const& wq, auto const& wk, auto const& wv,
                auto const& wo) {
    DotDims project{{2}, {0}, {}, {}};     // (b, s, m) . (m, h, d) -> (b, s, h, d)
    DotDims qk{{3}, {3}, {0, 2}, {0, 2}};  // -> (b, h, s_q, s_k)
    DotDims pv{{3}, {1}, {0, 1}, {0, 2}};  // -> (b, h, s_q, d)
    DotDims out{{1, 3}, {0, 1}, {}, {}};   // (b, h, s, d) . (h, d, m) -> (b, s, m)
    auto h = layer_norm(x, g1, b1, 1e-5);
    auto q = dot_general(h, wq, project), k = dot_general(h, wk, project), v = dot_general(h, wv, project);
    Shape const &xs = x.shape(), &ws = wq.shape();
    auto scores = dot_general(q, k, qk) * (1.0f / std::sqrt(static_cast<float>(ws[2])));
    auto p = causal_softmax(scores, Shape{xs[0], ws[1], xs[1], xs[1]});
    return x + dot_general(dot_general(p, v, pv), wo, out);
  });
}
inline auto mlp_half() {
  return jit([](auto const& x1, auto const& g2, auto const& b2, auto const& w1, auto const& w2) {
    DotDims dense{{2}, {0}, {}, {}};  // (b, s, m) . (m, f) -> (b, s, f)
    return x1 + dot_general(gelu(dot_general(layer_norm(x1, g2, b2, 1e-5), w1, dense)), w2, dense);
  });
}

}  // namespace tessel::measure
