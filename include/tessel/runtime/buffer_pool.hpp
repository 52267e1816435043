#pragma once
// Shard memory is recycled, the way XLA's BFC allocator and CUDA caching allocators do it: a freed
// shard goes back to a free list per unit and size instead of to the OS, so the next tensor of that size
// skips the page faults and zeroing of fresh memory (on a host backend, fresh 256 MB costs more
// than copying 256 MB). TESSEL_POOL_BYTES caps what is kept (default 4 GiB; 0 turns it off).
//
// The pool is stream-ordered (runtime/stream.hpp), as CUDA's caching allocators are: a buffer
// that goes back carries an event of every device's queue at that moment (work queued before it
// may still use the buffer); whoever takes it next makes each device it names wait for those
// events first, so a device waits only for other devices' work, never for its own. Where work is
// synchronous (a host without TESSEL_ASYNC) there is nothing to wait for and nothing is recorded.
#include <cstddef>
#include <memory>
#include <span>

#include "tessel/core/buffer_bytes.hpp"
#include "tessel/runtime/device.hpp"

namespace tessel::detail {

// Memory of the unit `where` runs on (its GPU, or the host), at least `bytes` long, returned to
// that unit's free lists when the last owner lets go. `users` (global device ids; other
// processes' are passed over) are the devices whose queues use it first: each waits for the
// buffer's last users. `charges` say which devices hold how much of it (runtime/memory_stats.hpp;
// the pool's rounding goes to the first); none: all of it is the first local user's.
std::shared_ptr<std::byte> acquire_device_memory(ExecSpace const& where, std::size_t bytes,
                                                 std::span<int const> users,
                                                 std::span<MemoryCharge const> charges = {});
// A temporary of one device's work.
std::shared_ptr<std::byte> acquire_device_memory(Device const& user, std::size_t bytes);
// Makes the pool hand buffers out without the waits for their last users: only for the test that
// shows the asynchronous mode catches a missing dependency (tests/runtime/test_streams.cpp).
void skip_pool_waits_for_test(bool skip);
// Frees everything cached (ScopeGuard calls it before Kokkos finalizes, its queues done).
void release_pooled_memory();
// Bytes held in free lists now.
std::size_t pooled_bytes();

}  // namespace tessel::detail
