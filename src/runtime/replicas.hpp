#pragma once
// Replicated blocks move once: the first holder of each box takes the data, the others copy it
// from there device to device (tensor_impl.cpp; used by the host transfers and the reshards).
#include <cstddef>
#include <vector>

#include "tessel/runtime/tensor_impl.hpp"

namespace tessel::detail {

// For each mesh position, the first position holding the same box (of this process's positions
// only, when `local`; another process's positions are then their own).
std::vector<std::size_t> first_holders(TensorImpl const& t, bool local = false);
// For each mesh position, the first position whose shard shares its buffer (itself when none; an
// empty shard or another process's shares nothing): the `owner` of a new tensor laid out as t
// (TensorImpl::allocate).
std::vector<std::size_t> buffer_owners(TensorImpl const& t);
// Each replica's device copies the block from the first holder's, after that device's work.
void copy_replicas(TensorImpl& t, std::vector<std::size_t> const& first);

}  // namespace tessel::detail
