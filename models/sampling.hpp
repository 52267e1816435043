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

namespace sampling {
// logits with every one below `cut` (broadcast along the last axis) set to -inf.
template <class T, class Cut>
Tensor<T> below_to_ninf(Tensor<T> const& logits, Cut const& cut) {
  return Tensor<T>(where(logits < cut, -std::numeric_limits<float>::infinity(), logits));
}

// top_p_logits' cut from `best`, n logits per row holding every finite one of `logits` (the row
// itself, or its largest after a top-k filter), in any order.
template <class T>
Tensor<T> top_p_among(Tensor<T> const& logits, Tensor<T> const& best, double p, std::int64_t min_keep) {
  if (!(p > 0 && p <= 1)) throw Error(std::format("top_p_logits: p = {} must be in (0, 1]", p));
  auto const rank = static_cast<int>(best.shape().size());
  std::int64_t const n = best.shape()[static_cast<std::size_t>(rank - 1)];
  min_keep = std::min(std::max<std::int64_t>(min_keep, 1), n);
  Tensor<T> const ascending = -lax::top_k(-best, n).first;  // smallest first, ties in index order
  auto const removed = cumsum(softmax(ascending), -1) <= 1.0 - p;
  // The last min_keep stay whatever their sum: positions n - min_keep onwards.
  auto const kept = where(iota<std::int32_t>(ascending.shape(), rank - 1) >= static_cast<std::int32_t>(n - min_keep),
                          ascending, where(removed, std::numeric_limits<float>::infinity(), ascending));
  return below_to_ninf(logits, min(kept, -1, true));
}
}  // namespace sampling

// TopKLogitsWarper: every logit below the k-th largest of its row becomes -inf (ties with it are
// kept). k is at least `min_keep` and at most the vocabulary.
template <class T>
Tensor<T> top_k_logits(Tensor<T> const& logits, std::int64_t k, std::int64_t min_keep = 1) {
  std::int64_t const vocab = logits.shape()[logits.shape().size() - 1];
  k = std::min(std::max(k, min_keep), vocab);
  return sampling::below_to_ninf(logits, slice_in_dim(lax::top_k(logits, k).first, k - 1, k, -1));
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
  std::int64_t const vocab = logits.shape()[logits.shape().size() - 1];
  std::int64_t const n = candidates > 0 ? std::min(candidates, vocab) : vocab;
  return sampling::top_p_among(logits, n < vocab ? Tensor<T>(lax::top_k(logits, n).first) : logits, p, min_keep);
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
  if (s.top_k > 0) {  // one selection of the k largest serves both warpers (top_k_logits, top_p_logits' candidates)
    std::int64_t const k = std::min(s.top_k, scaled.shape()[scaled.shape().size() - 1]);
    Tensor<T> const best(lax::top_k(scaled, k).first);
    scaled = sampling::below_to_ninf(scaled, slice_in_dim(best, k - 1, k, -1));
    if (s.top_p < 1.0) scaled = sampling::top_p_among(scaled, best, s.top_p, 1);
  } else if (s.top_p < 1.0) {
    scaled = top_p_logits(scaled, s.top_p);
  }
  return Tensor<std::int32_t>(random::categorical(random::fold_in(s.key, step), scaled));
}

}  // namespace tessel::models
