#pragma once
// Buffers written again after the step that made their tensor: a donated tensor's buffers taken
// in place by an op (runtime/donate.hpp). Every other buffer keeps its values while it lives
// (runtime/tensor_impl.hpp), so what is derived from its contents may be kept beside it: a host
// backend keeps GEMM operands packed for its kernels (backend/host/packed_operands.hpp), and drops
// the copy of a buffer rewritten since.
#include <cstddef>
#include <memory>

namespace tessel::detail {

// Whether two references (shared or weak) hold the same buffer: the same allocation, not merely
// the same address (the pool hands an address out again to a new buffer).
template <class A, class B>
bool same_buffer(A const& a, B const& b) {
  return !a.owner_before(b) && !b.owner_before(a);
}

// Marks `memory` rewritten, for as long as it lives (held by a weak reference).
void note_rewritten(std::shared_ptr<std::byte> const& memory);
// Whether `memory` was rewritten since it was allocated.
bool rewritten(std::shared_ptr<std::byte> const& memory);

}  // namespace tessel::detail
