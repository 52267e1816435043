#pragma once
// Which replicas of a fused region's result compute the same block. Replicas on devices that
// share memory (a host's cores, one GPU split into logical devices) whose evaluators read the same
// memory the same way compute equal blocks: the first computes it and the others share it
// (one buffer: TensorImpl::allocate's owner). A Megatron layer's LayerNorms and residual adds of an
// all-reduced activation, replicated over 'mp', then run once per 'dp' block instead of once per
// device. Values that merely happen to be equal in different memory are not found: sharing starts
// where a block is shared by construction (an all-reduce's result, a replicated device_put) and
// spreads through the regions that read it.
#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessel/core/named_sharding.hpp"
#include "tessel/core/shape.hpp"
#include "tessel/runtime/kernel_eval.hpp"
#include "tessel/runtime/tensor_impl.hpp"

namespace tessel::detail {

// What an evaluator's leaf reads: two devices whose leaves are equal compute the same values.
struct LeafKey {
  void const* data;
  std::int64_t start;
  std::array<std::int64_t, max_rank> stride;
  friend bool operator==(LeafKey const&, LeafKey const&) = default;
};

// For each mesh position of the result (`sharding` over `shape`), the position whose block it
// shares (itself when it computes its own); empty when every position computes its own.
// bind_at(pos) gives the region's evaluator for the device at `pos`.
template <class BindAt>
std::vector<std::size_t> shared_buffers(Shape const& shape, NamedSharding const& sharding, BindAt const& bind_at) {
  if (sharding.layout().replication() == 1) return {};  // no two devices hold the same box
  std::vector<std::size_t> owner = replica_owners(shape, sharding);
  std::vector<std::vector<LeafKey>> keys(owner.size());
  std::vector<bool> keyed(owner.size(), false);
  auto key = [&](std::size_t pos) -> std::vector<LeafKey> const& {
    if (!keyed[pos]) {
      auto ev = bind_at(pos);
      ev.for_each_leaf([&](LeafRef const& l) {
        LeafKey k{l.data, l.start, {}};
        for (std::size_t d = 0; d < max_rank; ++d) k.stride[d] = l.stride[d];
        keys[pos].push_back(k);
      });
      keyed[pos] = true;
    }
    return keys[pos];
  };
  bool any = false;
  for (std::size_t pos = 0; pos < owner.size(); ++pos) {
    if (owner[pos] == pos) continue;
    if (key(pos) == key(owner[pos])) any = true;
    else owner[pos] = pos;
  }
  if (!any) owner.clear();
  return owner;
}

}  // namespace tessel::detail
