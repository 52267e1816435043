#pragma once
// Where a process's logical devices run: the unit (a GPU, or the host) each one is placed on,
// chosen when the devices are made, from TESSEL_GPUS:
//   unset or 1  every logical device on one unit: Kokkos' GPU, split into one stream per device,
//               or the host's cores;
//   N, or all   N GPUs of this process (all it sees, up to one per device), from Kokkos' own:
//               devices in contiguous blocks, so that neighbours on a mesh's last axis (the one
//               sharded most finely) share a GPU.
// explain ends with the placement ("devices: 0..3 on GPU 0, 4..7 on GPU 1").
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tessel {

// This process's placement as explain prints it (the devices are made if they were not yet).
std::string device_placement();

namespace detail {

// The unit of each of `devices` logical devices for the request `gpus` (TESSEL_GPUS's value, null
// when unset), given the `unit_count` units from `first_unit` the backend offers on `platform`;
// fails naming the request, the device count and what the backend has.
std::vector<int> place_devices(int devices, char const* gpus, int first_unit, int unit_count, std::string_view platform);
// "0..3 on GPU 0, 4..7 on GPU 1": devices from `first_device`, grouped by unit (named by
// `unit_name`) in order.
std::string describe_placement(std::span<int const> units, int first_device,
                               std::function<std::string(int)> const& unit_name);
// This process's placement once its devices are made, else empty: what explain's last line says
// ("devices: ..."), without making the devices to say it.
std::string placement_note();

}  // namespace detail
}  // namespace tessel
