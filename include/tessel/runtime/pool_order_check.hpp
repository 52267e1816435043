#pragma once
// A check of the stream-ordered pool (buffer_pool.hpp) for runs whose device work is asynchronous
// (TESSEL_ASYNC=1 on a host, a GPU). With TESSEL_CHECK_POOL_ORDER=1, a buffer the pool hands out
// again is first filled with 0xFF bytes (NaN in floats, -1 in integers) on its first user's queue,
// after that queue's waits for the buffer's last users, and its other users wait for the fill.
// Work that used the buffer after its release without being ordered before the new users (a
// missing event), or a kernel that reads memory it never wrote, then meets poison, and a test
// sees a wrong value instead of passing by luck.
#include <cstddef>
#include <span>

namespace tessel::detail {

// Whether the check is on (read once from the environment).
bool pool_order_checked() noexcept;
// A reused buffer of `bytes` at `memory` goes to the queues of `users` (global device ids).
void check_reused(void* memory, std::size_t bytes, std::span<int const> users);

}  // namespace tessel::detail
