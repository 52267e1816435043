#pragma once
// jax.random: counter-based random numbers. Every element's value depends only on the key and the
// element's global index (threefry2x32, JAX's partitionable scheme), so a tensor drawn sharded
// equals the same tensor drawn whole, on any mesh, device count or backend.
#include <concepts>
#include <cstdint>
#include <vector>

#include "tessel/runtime/tensor.hpp"
#include "tessel/runtime/threefry.hpp"

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

}  // namespace tessel::random

namespace tessel {
using random::PRNGKey;
}
