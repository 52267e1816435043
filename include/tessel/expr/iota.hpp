#pragma once
// lax.broadcasted_iota and jnp.arange: a leaf that holds no memory. Its value at a position is that
// position's coordinate along one dimension, computed inside the kernel that reads it, so a causal
// mask where(iota(s, 0) >= iota(s, 1), x, -inf) fuses into softmax. It takes the sharding its
// consumer wants (every device computes its own block's coordinates).
#include <cstdint>
#include <format>

#include "tessel/core/error.hpp"
#include "tessel/expr/node.hpp"

namespace tessel {

template <Element T>
struct Iota {
  static constexpr NodeKind kind = NodeKind::iota;
  struct Data {
    Shape shape;
    std::uint8_t dimension;
  };
  template <class...>
  using value_type = T;
  static Shape const& shape(Data const& d) { return d.shape; }
  static constexpr char const* name(Data const&) { return "iota"; }
  static void describe(Data const& d, auto& node, auto&) { node.axis = d.dimension; }
  static void sign(Data const& d, Shape const& shape, auto& sink) {
    for (auto n : shape) sink.word(static_cast<std::uint64_t>(n));
    sink.word(d.dimension);
  }
};
template <Element T>
using IotaNode = Node<Iota<T>>;

namespace detail {
// Fails naming the dimension and the shape unless `dimension` is one of its dimensions, and
// checks the shape's sizes.
std::uint8_t iota_dimension(Shape const& shape, int dimension);
}  // namespace detail

// lax.broadcasted_iota(dtype, shape, dimension): element (i0, i1, ...) is i_dimension.
template <Element T>
IotaNode<T> iota(Shape const& shape, int dimension = 0) {
  return {{}, {shape, detail::iota_dimension(shape, dimension)}};
}

// jnp.arange(n): 0, 1, ..., n - 1.
template <Element T>
IotaNode<T> arange(std::int64_t n) {
  return iota<T>(Shape{n}, 0);
}

}  // namespace tessel
