#pragma once
// Shard memory is recycled, the way XLA's BFC allocator and CUDA caching allocators do it: a freed
// shard goes back to a per-size free list instead of to the OS, so the next tensor of that size
// skips the page faults and zeroing of fresh memory (on a host backend, fresh 256 MB costs more
// than copying 256 MB). TESSEL_POOL_BYTES caps what is kept (default 4 GiB; 0 turns it off).
#include <cstddef>
#include <memory>

namespace tessel::detail {

// Memory in the devices' memory space, at least `bytes` long, returned to the pool when the last
// owner lets go.
std::shared_ptr<std::byte> acquire_device_memory(std::size_t bytes);
// Frees everything cached (ScopeGuard calls it before Kokkos finalizes).
void release_pooled_memory();
// Bytes held in free lists now.
std::size_t pooled_bytes();

}  // namespace tessel::detail
