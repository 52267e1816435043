#pragma once
// jax.debug.visualize_array_sharding: a terminal drawing of which devices hold which block of a
// 1-D or 2-D tensor. Each box is one shard; devices holding the same block are listed together.
#include <iostream>
#include <string>

#include "tessel/core/named_sharding.hpp"
#include "tessel/runtime/tensor.hpp"

namespace tessel {

enum class BoxStyle { utf8, ascii };

struct VisualizeOptions {
  BoxStyle style = BoxStyle::utf8;
};

// The drawing as text; fails for ranks other than 1 and 2, or a sharding that cannot tile shape.
std::string render_sharding(Shape const& shape, NamedSharding const& sharding, VisualizeOptions options = {});

// Inside shard_map a tensor is one block per device (TensorImpl::varying): the drawing is the
// mesh, one cell per device's block, under a line giving the block's shape and the axes along
// which the blocks differ (jax#23936: JAX cannot draw these).
std::string render_blocks(Shape const& block, Mesh const& mesh, std::uint32_t varying, VisualizeOptions options = {});

template <Element T>
void visualize_array_sharding(Tensor<T> const& x, VisualizeOptions options = {}, std::ostream& out = std::cout) {
  if (x.impl().varying) out << render_blocks(x.shape(), x.sharding().mesh(), x.impl().varying, options);
  else out << render_sharding(x.shape(), x.sharding(), options);
}

}  // namespace tessel
