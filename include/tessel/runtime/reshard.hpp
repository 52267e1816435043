#pragma once
// Resharding by collectives: when a sharding change is one collective (plan/reshard.hpp: an
// all-gather, an all-to-all or a collective-permute), it runs as that collective of
// collectives() over the groups of its mesh axes; anything else (local slices,
// compositions, moves between meshes of different devices' blocks) runs as box copies. Both give
// the same bits.
#include <memory>
#include <optional>

#include "tessel/plan/reshard.hpp"
#include "tessel/runtime/tensor_impl.hpp"

namespace tessel::detail {

struct Resharded {
  std::shared_ptr<TensorImpl> tensor;
  std::optional<plan::Collective> collective;  // the collective that ran, if one did
};

Resharded reshard_with_collectives(TensorImpl const& source, NamedSharding const& target);
// The generic path: every destination block copied from the blocks that overlap it (a replica on
// the same device first). Also checks that the target is on the source's devices.
std::shared_ptr<TensorImpl> reshard_by_copies(TensorImpl const& source, NamedSharding const& target);
// Throws, naming both meshes, when `target` is on other devices than `source` (and the source is
// not on a single device).
void check_reshard_devices(TensorImpl const& source, NamedSharding const& target);

}  // namespace tessel::detail
