#pragma once
// What ScopeGuard (scope_guard.cpp) asks of the device registry (device.cpp) at its end.

namespace tessel::detail {

// Drops the devices (their instances hold Kokkos resources); device() then says the runtime was
// finalized.
void forget_devices();

}  // namespace tessel::detail
