#pragma once
// How a decoder picks its next token from its last logits: greedy, or drawn with
// jax.random.categorical after Hugging Face's logits warpers, in the order its generate applies
// them: temperature, then top-k (TopKLogitsWarper), then top-p (TopPLogitsWarper). Every step
// works in the logits' sharding: a vocabulary split over mp is filtered and sampled with no
// gather of the logits (top_k gathers k candidates per device).
#include <cstdint>
#include <format>
#include <limits>

#include "tessel/tessel.hpp"

namespace tessel::models {

// TopKLogitsWarper: every logit below the k-th largest of its row becomes -inf (ties with it are
// kept). k is at least `min_keep` and at most the vocabulary.
template <class T>
Tensor<T> top_k_logits(Tensor<T> const& logits, std::int64_t k, std::int64_t min_keep = 1) {
  std::int64_t const vocab = logits.shape()[logits.shape().size() - 1];
  k = std::min(std::max(k, min_keep), vocab);
  auto const kth = slice_in_dim(lax::top_k(logits, k).first, k - 1, k, -1);
  return Tensor<T>(where(logits < kth, -std::numeric_limits<float>::infinity(), logits));
}

// TopPLogitsWarper: keeps the fewest largest logits whose probabilities sum to more than p (at
// least `min_keep` of them), as HF computes it: the ascending sort's cumulative softmax, every
// logit at or below 1 - p removed. The cut is a logit value, so logits tied with the smallest kept
// one are all kept (HF keeps those its sort put after the cut).
//
// `candidates` > 0 says every logit but the largest `candidates` of each row is -inf already (a
// top-k filter ran first), so only those are sorted: the same result, without sorting the
// vocabulary (unless ties with the k-th largest kept more than `candidates`: those left out of the
// sort are left out of the sum).
template <class T>
Tensor<T> top_p_logits(Tensor<T> const& logits, double p, std::int64_t min_keep = 1, std::int64_t candidates = 0) {
  if (!(p > 0 && p <= 1)) throw Error(std::format("top_p_logits: p = {} must be in (0, 1]", p));
  std::int64_t const vocab = logits.shape()[logits.shape().size() - 1];
  std::int64_t const n = candidates > 0 ? std::min(candidates, vocab) : vocab;
  min_keep = std::min(std::max<std::int64_t>(min_keep, 1), n);
  // The n largest, smallest first (ties in index order).
  Tensor<T> const best = n < vocab ? Tensor<T>(lax::top_k(logits, n).first) : logits;
  Tensor<T> const ascending = -lax::top_k(-best, n).first;
  auto const removed = cumsum(softmax(ascending), -1) <= 1.0 - p;
  // The last min_keep stay whatever their sum: positions n - min_keep onwards.
  auto const rank = static_cast<int>(ascending.shape().size());
  auto const kept = where(iota<std::int32_t>(ascending.shape(), rank - 1) >= static_cast<std::int32_t>(n - min_keep),
                          ascending, where(removed, std::numeric_limits<float>::infinity(), ascending));
  auto const cut = min(kept, -1, true);
  return Tensor<T>(where(logits < cut, -std::numeric_limits<float>::infinity(), logits));
}

// How generate picks each token: greedy (temperature 0: the argmax of the logits), or drawn from
// softmax(warped logits / temperature) with jax.random.categorical, step t with fold_in(key, t).
// top_k 0 and top_p 1 turn their warper off, as in HF's generate.
struct Sampling {
  double temperature = 0.0;
  std::int64_t top_k = 0;
  double top_p = 1.0;
  random::Key key = random::PRNGKey(0);
};

// The next token of each row of `logits` (..., vocab): int32, of the logits' shape without the
// vocabulary.
template <class T>
Tensor<std::int32_t> pick_token(Tensor<T> const& logits, Sampling const& s, std::uint32_t step) {
  if (s.temperature <= 0) return Tensor<std::int32_t>(argmax(logits, -1));
  Tensor<T> scaled(logits * (1.0 / s.temperature));
  if (s.top_k > 0) scaled = top_k_logits(scaled, s.top_k);
  if (s.top_p < 1.0) scaled = top_p_logits(scaled, s.top_p, 1, s.top_k);  // sorts only top_k's survivors
  return Tensor<std::int32_t>(random::categorical(random::fold_in(s.key, step), scaled));
}

}  // namespace tessel::models
