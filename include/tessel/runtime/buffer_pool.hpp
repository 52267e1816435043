#pragma once
// Shard memory is recycled, the way XLA's BFC allocator and CUDA caching allocators do it: a freed
// shard goes back to a free list per unit and size instead of to the OS, so the next tensor of that size
// skips the page faults and zeroing of fresh memory (on a host backend, fresh 256 MB costs more
// than copying 256 MB). TESSEL_POOL_BYTES caps what is kept (default 4 GiB; 0 turns it off).
#include <cstddef>
#include <memory>

#include "tessel/runtime/device.hpp"

namespace tessel::detail {

// Memory of the unit `where` runs on (its GPU, or the host), at least `bytes` long, returned to
// that unit's free lists when the last owner lets go.
std::shared_ptr<std::byte> acquire_device_memory(ExecSpace const& where, std::size_t bytes);
// Keeps `memory` from the pool until the next fence of every device (fence_all_devices), for a
// buffer that work queued on a device's instance may still use (a reduction's partial results):
// its stream-ordered release, without waiting for that work now.
void release_after_fence(std::shared_ptr<std::byte> memory);
// What release_after_fence kept, given back (fence_all_devices calls it after its fence).
void release_fenced_memory();
// Frees everything cached (ScopeGuard calls it before Kokkos finalizes).
void release_pooled_memory();
// Bytes held in free lists now.
std::size_t pooled_bytes();

}  // namespace tessel::detail
