#pragma once
// The run-time start of a dynamic_slice's or dynamic_update_slice's box on one device, per operand
// dimension, as the kernels read it: a constant (a C++ integer start, or 0 for a dimension no
// start names) or the value of a 0-d int32 / int64 tensor in that device's memory, read by the
// kernel itself (so nothing waits for the host). As in JAX, a negative start counts from the end
// once, then the box is clamped inside the operand: into [0, operand - box].
#include <algorithm>
#include <cstdint>

#include "kernel.hpp"
#include "tessel/runtime/backend/kernel_traits.hpp"

namespace tessel::detail {

struct BoxStarts {
  std::int64_t constant[max_rank]{};
  std::int64_t size[max_rank]{};   // the operand's
  std::int64_t limit[max_rank]{};  // operand size - box size
  void const* tensor[max_rank]{};
  bool wide[max_rank]{};  // an int64 tensor

  KOKKOS_INLINE_FUNCTION std::int64_t operator[](int d) const {
    std::int64_t v = constant[d];
    if (tensor[d] != nullptr)
      v = wide[d] ? *static_cast<std::int64_t const*>(tensor[d]) : *static_cast<std::int32_t const*>(tensor[d]);
    if (v < 0) v += size[d];
    return v < 0 ? 0 : v > limit[d] ? limit[d] : v;
  }
};

// The starts on mesh position `pos`: the node's children from `first` on are its start indices
// (node.axes names the dimension of each); scalars come from the run's scalars, tensors from the
// step's operands (every child but a scalar is one, in order).
inline BoxStarts box_starts(KernelArgs const& k, Shape const& operand, Shape const& box, std::size_t first,
                            std::size_t pos) {
  BoxStarts s;
  for (std::size_t d = 0; d < operand.size(); ++d) {
    s.size[d] = operand[d];
    s.limit[d] = operand[d] - box[d];
  }
  auto const& node = k.node();
  std::size_t operand_index = 0;
  for (std::size_t c = 0; c < node.children.size(); ++c) {
    auto const child = static_cast<std::size_t>(node.children[c]);
    bool const scalar = k.plan.graph[child].kind == NodeKind::scalar;
    if (c >= first) {
      std::size_t const d = node.axes[c - first];
      if (scalar) {
        s.constant[d] = static_cast<std::int64_t>(k.state.scalars[child]);
      } else {
        TensorImpl const& t = *k.operand(operand_index);
        s.tensor[d] = t.shards[pos].bytes.data();
        s.wide[d] = t.dtype == DType::int64;
      }
    }
    if (!scalar) ++operand_index;
  }
  return s;
}

// A block's extents and row-major strides (core/shape.hpp), as plain arrays a kernel captures.
struct BlockStrides {
  std::int64_t extent[max_rank]{};
  std::int64_t stride[max_rank]{};
};
inline BlockStrides block_strides(Shape const& block) {
  BlockStrides b;
  std::copy(block.begin(), block.end(), b.extent);
  row_major_strides(block, b.stride);
  return b;
}

}  // namespace tessel::detail
