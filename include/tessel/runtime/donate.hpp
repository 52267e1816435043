#pragma once
// Donation, as jax.jit's donate_argnums and PyTorch's in-place updates: the caller gives a
// tensor's buffers up, so an op whose result has the tensor's shape and sharding may write it
// over them instead of into new memory. dynamic_update_slice does: a KV cache donated to a decode
// step takes the new token in place, and the step's work no longer grows with the cache (without
// donation each step copies every layer's cache).
//
// The promise the caller makes: the donated tensor is not read again (after the call it may hold
// the updated values). An op reuses the buffers only when nothing else can see them: the tensor was
// donated, the op is the last step of its plan to read it, and no other tensor (a replica, a view)
// shares its buffers; otherwise it copies, as without donation. A donation not taken lapses with
// the tensor.
#include <vector>

#include "tessel/runtime/tensor.hpp"

namespace tessel {

namespace detail {
// Marks t donated (held by a weak reference: a tensor that dies is forgotten).
void mark_donated(std::shared_ptr<TensorImpl const> const& t);
// Whether t was donated; the donation is used up (true once).
bool take_donation(TensorImpl const& t);
// Whether t is donated now (the donation is not used up).
bool is_donated(TensorImpl const& t);
}  // namespace detail

template <Element T>
Tensor<T> const& donate(Tensor<T> const& t) {
  detail::mark_donated(t.impl_ptr());
  return t;
}
template <Element T>
std::vector<Tensor<T>> const& donate(std::vector<Tensor<T>> const& ts) {
  for (auto const& t : ts) detail::mark_donated(t.impl_ptr());
  return ts;
}

}  // namespace tessel
