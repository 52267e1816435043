#pragma once
// What the lower layers tell a jitted body's recording (runtime/program.hpp) without knowing it:
// where a tensor is made or read outside an evaluation, which a replay would not repeat. Each is
// a thread-local check when nothing records.
#include <memory>
#include <string_view>

namespace tessel {
class NamedSharding;
}

namespace tessel::detail {

struct TensorImpl;  // runtime/tensor_impl.hpp

// The body did something a replay would not repeat (`what` says what, for explain); no-op when
// nothing records on this thread, or inside a recorded step.
void not_replayable(std::string_view what);
// A tensor was made (TensorImpl::allocate), on any thread: counted while any recording lives.
void note_tensor_made();
// A body read shards directly (Tensor::addressable_shards).
void note_shard_access();
// device_put's reshard (detail::reshard), a step of the recording when one watches.
std::shared_ptr<TensorImpl const> recorded_reshard(std::shared_ptr<TensorImpl const> const& from,
                                                   NamedSharding const& to);

}  // namespace tessel::detail
