#include "tessel/runtime/pool_order_check.hpp"

#include <Kokkos_Core.hpp>

#include "tessel/runtime/device.hpp"
#include "tessel/runtime/stream.hpp"
#include "env_switch.hpp"

namespace tessel::detail {

bool pool_order_checked() noexcept {
  static bool const on = switched_on("TESSEL_CHECK_POOL_ORDER");
  return on;
}

void check_reused(void* memory, std::size_t bytes, std::span<int const> users) {
  if (!pool_order_checked() || users.empty()) return;
  Device const& first = device(users[0]);
  enqueue(first, "tessel::pool_order_check::poison", [memory, bytes](ExecSpace const& exec, char const*) {
    Kokkos::View<std::byte*, MemSpace, Kokkos::MemoryUnmanaged> view(static_cast<std::byte*>(memory), bytes);
    Kokkos::deep_copy(exec, view, std::byte{0xff});
  });
  for (int user : users.subspan(1)) wait_for(device(user), first);
}

}  // namespace tessel::detail
