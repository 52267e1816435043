// The ordering primitives (runtime/stream.hpp) in the asynchronous host mode (TESSEL_ASYNC=1),
// where each device's work runs on a host thread of its own, as on a GPU stream. CTest runs these
// hidden cases with the mode on (tests/CMakeLists.txt). A device can be held back by a gate (work
// that waits for the test to open it), so that an ordering the test leaves out changes a value
// every time instead of by chance: the mode catches a missing dependency.
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <cstring>
#include <future>
#include <vector>

#include "tessel/runtime/block_copy.hpp"
#include "tessel/runtime/buffer_pool.hpp"
#include "tessel/runtime/stream.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using detail::copy_bytes;
using detail::fill_bytes;

namespace {

constexpr std::size_t bytes = 4096;

// Holds device d's queue until open() is called.
class Gate {
 public:
  explicit Gate(Device const& d) {
    detail::enqueue(d, "tessel::test::gate", [open = open_.get_future().share()](ExecSpace const&, char const*) { open.wait(); });
  }
  void open() { open_.set_value(); }

 private:
  std::promise<void> open_;
};

std::vector<unsigned char> read(Device const& d, std::byte const* p) {
  detail::fence_device(d);
  std::vector<unsigned char> out(bytes);
  std::memcpy(out.data(), p, bytes);
  return out;
}

bool all(std::vector<unsigned char> const& v, unsigned char value) {
  for (auto b : v)
    if (b != value) return false;
  return true;
}

}  // namespace

TEST_CASE("a launch returns before its work runs, and one device's work runs in issue order", "[.async]") {
  REQUIRE(detail::host_queues_active());
  Device const& d = device(0);
  auto a = detail::acquire_device_memory(d, bytes);
  fill_bytes(d, a.get(), bytes, std::byte{0});
  detail::fence_device(d);
  Gate gate(d);
  fill_bytes(d, a.get(), bytes, std::byte{1});
  fill_bytes(d, a.get(), bytes, std::byte{2});
  std::vector<unsigned char> before(bytes);
  std::memcpy(before.data(), a.get(), bytes);  // (held at the gate: nothing else touches it)
  CHECK(all(before, 0));
  gate.open();
  CHECK(all(read(d, a.get()), 2));  // the second fill ran last
}

TEST_CASE("a read of another device's data needs an event: without it the value is wrong", "[.async]") {
  REQUIRE(detail::host_queues_active());
  Device const& writer = device(0);
  Device const& reader = device(1);
  auto a = detail::acquire_device_memory(writer, bytes);
  auto b = detail::acquire_device_memory(reader, bytes);
  fill_bytes(writer, a.get(), bytes, std::byte{0});
  fill_bytes(reader, b.get(), bytes, std::byte{0});
  fence_all_devices();

  SECTION("with the wait, the reader sees the write") {
    Gate gate(writer);
    fill_bytes(writer, a.get(), bytes, std::byte{7});
    detail::wait_for(reader, writer);
    copy_bytes(reader, b.get(), a.get(), bytes);
    gate.open();
    CHECK(all(read(reader, b.get()), 7));
  }
  SECTION("the wait removed, the reader copies before the write") {
    Gate gate(writer);
    fill_bytes(writer, a.get(), bytes, std::byte{7});
    copy_bytes(reader, b.get(), a.get(), bytes);  // (no wait_for: the dependency is missing)
    CHECK(all(read(reader, b.get()), 0));
    gate.open();
    detail::fence_device(writer);
  }
}

TEST_CASE("the pool gives a buffer to another device only after its last users", "[.async]") {
  REQUIRE(detail::host_queues_active());
  Device const& last_user = device(1);
  Device const& next_user = device(0);
  fence_all_devices();
  detail::release_pooled_memory();
  auto out = detail::acquire_device_memory(last_user, bytes);
  auto buffer = detail::acquire_device_memory(last_user, bytes);
  fill_bytes(last_user, buffer.get(), bytes, std::byte{1});
  fence_all_devices();

  bool const skip_waits = GENERATE(false, true);
  Gate gate(last_user);
  copy_bytes(last_user, out.get(), buffer.get(), bytes);  // queued behind the gate: reads the buffer later
  std::byte* const released = buffer.get();
  buffer.reset();  // back to the pool, with events after the copy
  detail::skip_pool_waits_for_test(skip_waits);
  auto reused = detail::acquire_device_memory(next_user, bytes);
  detail::skip_pool_waits_for_test(false);
  REQUIRE(reused.get() == released);
  fill_bytes(next_user, reused.get(), bytes, std::byte{2});
  if (skip_waits) detail::fence_device(next_user);  // (it does not wait for the gate: the fill is done)
  gate.open();
  auto const seen = read(last_user, out.get());
  fence_all_devices();
  // The copy must see the buffer as it was released; without the pool's waits the next user's
  // write came first.
  CHECK(all(seen, skip_waits ? 2 : 1));
}

TEST_CASE("with the pool order check, a reused buffer is poisoned before its next users", "[.pool_poison]") {
  REQUIRE(detail::host_queues_active());
  fence_all_devices();
  detail::release_pooled_memory();
  auto first = detail::acquire_device_memory(device(0), bytes);
  fill_bytes(device(0), first.get(), bytes, std::byte{0});
  std::byte* const released = first.get();
  first.reset();
  auto again = detail::acquire_device_memory(device(3), bytes);
  REQUIRE(again.get() == released);
  CHECK(all(read(device(3), again.get()), 0xff));
}

TEST_CASE("a step's ordering counts: launches, events and waits are counted", "[runtime][streams]") {
  auto& counts = detail::ordering_counts();
  auto const launches = counts.launches.load();
  auto a = detail::acquire_device_memory(device(0), bytes);
  fill_bytes(device(0), a.get(), bytes, std::byte{0});
  CHECK(counts.launches.load() == launches + 1);
  auto const fences = counts.device_fences.load();
  detail::fence_device(device(0));
  CHECK(counts.device_fences.load() == fences + 1);
}
