#pragma once
// jax.random: counter-based random numbers. Every element's value depends only on the key and the
// element's global index (threefry2x32, JAX's partitionable scheme), so a tensor drawn sharded
// equals the same tensor drawn whole, on any mesh, device count or backend.
#include <concepts>
#include <cstdint>
#include <limits>
#include <vector>

#include "tessel/expr/arg_reduce.hpp"
#include "tessel/expr/elementwise.hpp"
#include "tessel/runtime/tensor.hpp"
#include "tessel/runtime/random_from_bits.hpp"

namespace tessel::random {

using Key = prng::Key;

// jax.random.PRNGKey(seed)
Key PRNGKey(std::int64_t seed);
// jax.random.split(key, num)
std::vector<Key> split(Key key, int num = 2);
// jax.random.fold_in(key, data)
Key fold_in(Key key, std::uint32_t data);

namespace detail {
enum class Distribution { uniform, normal };
std::shared_ptr<tessel::detail::TensorImpl> draw(Key key, Shape const& shape, DType dtype,
                                                 NamedSharding const& sharding, Distribution dist, double minval,
                                                 double maxval);
}  // namespace detail

// jax.random.uniform(key, shape, dtype, minval, maxval), drawn directly in the given sharding
// (each device computes only its own shard).
// bfloat16 and float16 draw JAX's bits (8 and 16 random bits of the float32 draw's word).
template <FloatingElement T = float>
Tensor<T> uniform(Key key, Shape const& shape, NamedSharding const& sharding, compute_t<T> minval = 0,
                  compute_t<T> maxval = 1) {
  return Tensor<T>(detail::draw(key, shape, dtype_of<T>, sharding, detail::Distribution::uniform, minval, maxval));
}
template <FloatingElement T = float>
Tensor<T> uniform(Key key, Shape const& shape, compute_t<T> minval = 0, compute_t<T> maxval = 1) {
  return uniform<T>(key, shape, tessel::detail::single_device_sharding(), minval, maxval);
}

// jax.random.normal(key, shape, dtype): standard normal, drawn directly in the given sharding.
template <FloatingElement T = float>
Tensor<T> normal(Key key, Shape const& shape, NamedSharding const& sharding) {
  return Tensor<T>(detail::draw(key, shape, dtype_of<T>, sharding, detail::Distribution::normal, 0, 1));
}
template <FloatingElement T = float>
Tensor<T> normal(Key key, Shape const& shape) {
  return normal<T>(key, shape, tessel::detail::single_device_sharding());
}

// jax.random.gumbel(key, shape, dtype) with JAX's default mode ("low"): -log(-log(u)) of u =
// uniform(key, shape, minval=tiny, maxval=1), drawn directly in the given sharding.
template <FloatingElement T = float>
Tensor<T> gumbel(Key key, Shape const& shape, NamedSharding const& sharding) {
  return Tensor<T>(-log(-log(uniform<T>(key, shape, sharding, std::numeric_limits<compute_t<T>>::min(), 1))));
}

// jax.random.categorical(key, logits, axis): one index along `axis` drawn from softmax(logits), as
// JAX draws it: argmax(gumbel(key, logits.shape) + logits, axis), the noise drawn in the logits'
// sharding (a vocabulary split over devices samples without gathering the logits). Returns the
// int32 expression.
template <FloatingElement T>
auto categorical(Key key, Tensor<T> const& logits, int axis = -1) {
  return argmax(gumbel<T>(key, logits.shape(), logits.sharding()) + logits, axis);
}

}  // namespace tessel::random

namespace tessel {
using random::PRNGKey;
}
