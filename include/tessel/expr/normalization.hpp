#pragma once
// jnp.var and the normalizations of model code (Flax's LayerNorm and RMSNorm), written as
// compositions of tessel's ops the way JAX and Flax write them, so they plan, fuse and shard like
// any expression: over the last axis, every reduction is row-fused into one kernel.
#include <cmath>
#include <limits>

#include "tessel/expr/reduce.hpp"

namespace tessel {

namespace detail {
// The number of elements a reduction over `axes` of `shape` combines.
std::int64_t reduced_count(char const* op, Axes const& axes, Shape const& shape);
}  // namespace detail

// jnp.var(x, axis, keepdims, ddof): two passes, as jax/_src/numpy/reductions.py::_var:
// centered = x - mean(x, keepdims); sum(square(centered)) * (1 / (n - ddof)), NaN when n - ddof <= 0.
// Integer and 16-bit float inputs are converted to float32 first (the latter rounded back).
template <class X>
  requires(Operand<X> && !std::is_arithmetic_v<std::remove_cvref_t<X>>)
constexpr auto var(X const& x, Axes const& axes = {}, bool keepdims = false, int ddof = 0) {
  using V = expr_value_t<node_t<X>>;
  if constexpr (std::integral<V>) {
    return var(astype<float>(x), axes, keepdims, ddof);
  } else if constexpr (HalfFloat<V>) {  // JAX upcasts 16-bit floats, computes in float32, rounds once
    return astype<V>(var(astype<float>(x), axes, keepdims, ddof));
  } else {
    auto n = detail::reduced_count("var", axes, as_node(x).shape());
    double const divisor = n - ddof > 0 ? static_cast<double>(n - ddof) : std::numeric_limits<double>::quiet_NaN();
    // XLA multiplies by the constant divisor's reciprocal, computed in V.
    double const scale = static_cast<double>(V(1) / static_cast<V>(divisor));
    return detail::make_node<ops::mul_apart, detail::Typing::arithmetic>(
        as_node(sum(square(x - mean(x, axes, true)), axes, keepdims)), as_node(scale));
  }
}

// flax.linen.LayerNorm over the last axis with its defaults (use_fast_variance=True: the variance
// is mean(x^2) - mean(x)^2, clipped at 0): (x - mean) * (rsqrt(var + epsilon) * scale) + bias,
// scale and bias of the last dimension's size.
template <class X, class S, class B>
constexpr auto layer_norm(X const& x, S const& scale, B const& bias, double epsilon = 1e-6) {
  auto mu = mean(x, -1, true);
  auto variance = maximum(mean(square(x), -1, true) - square(mu), 0.0);
  return (x - mu) * (rsqrt(variance + epsilon) * scale) + bias;
}

// flax.linen.LayerNorm(use_fast_variance=False): the variance in two passes, mean(square(x - mean)).
template <class X, class S, class B>
constexpr auto layer_norm_two_pass(X const& x, S const& scale, B const& bias, double epsilon = 1e-6) {
  auto mu = mean(x, -1, true);
  return (x - mu) * (rsqrt(mean(square(x - mu), -1, true) + epsilon) * scale) + bias;
}

// flax.linen.RMSNorm over the last axis: x * (rsqrt(mean(x^2) + epsilon) * scale).
template <class X, class S>
constexpr auto rms_norm(X const& x, S const& scale, double epsilon = 1e-6) {
  return x * (rsqrt(mean(square(x), -1, true) + epsilon) * scale);
}

}  // namespace tessel
