#include "tessel/runtime/device_placement.hpp"

#include <algorithm>
#include <format>

#include "tessel/core/error.hpp"
#include "tessel/runtime/backend/devices.hpp"
#include "positive_count.hpp"

namespace tessel {
namespace detail {
namespace {

// TESSEL_GPUS as a count: 1 when unset; for "all", every unit offered, up to one per device.
int requested_units(char const* gpus, int offered, int devices) {
  if (gpus == nullptr || *gpus == '\0') return 1;
  if (std::string_view(gpus) == "all") return std::min(offered, devices);
  if (auto n = positive_count(gpus)) return *n;
  throw Error(std::format("TESSEL_GPUS='{}' is not a GPU count: give a number from 1, or 'all'", gpus));
}

}  // namespace

std::vector<int> place_devices(int devices, char const* gpus, int first_unit, int unit_count, std::string_view platform) {
  int const offered = unit_count - first_unit;  // Kokkos' own unit and those after it
  int const n = requested_units(gpus, offered, devices);
  if (n > 1 && platform != "gpu")
    throw Error(std::format("TESSEL_GPUS={} asks for {} GPUs, but this build's backend runs on {} (platform '{}'), "
                            "whose {} logical devices share it; build a GPU backend's preset to place devices on GPUs",
                            gpus, n, backend::unit_name(first_unit), platform, devices));
  if (n > offered)
    throw Error(std::format("TESSEL_GPUS={} asks for {} GPUs from GPU {} (Kokkos' device), but this process sees {} "
                            "GPU{} (0..{}): at most {} from there",
                            gpus, n, first_unit, unit_count, unit_count == 1 ? "" : "s", unit_count - 1, offered));
  if (n > devices)
    throw Error(std::format("TESSEL_GPUS={} asks for {} GPUs for {} logical device{} (TESSEL_NUM_DEVICES or "
                            "set_device_count): a device runs on one GPU, so at most {}",
                            gpus, n, devices, devices == 1 ? "" : "s", devices));
  std::vector<int> units(static_cast<std::size_t>(devices));
  for (int d = 0; d < devices; ++d)  // contiguous blocks, as even as the counts allow
    units[static_cast<std::size_t>(d)] = first_unit + static_cast<int>(static_cast<long long>(d) * n / devices);
  return units;
}

std::string describe_placement(std::span<int const> units, int first_device,
                               std::function<std::string(int)> const& unit_name) {
  std::string s;
  for (std::size_t d = 0; d < units.size();) {
    std::size_t end = d;
    while (end + 1 < units.size() && units[end + 1] == units[d]) ++end;
    int const from = first_device + static_cast<int>(d), to = first_device + static_cast<int>(end);
    s += std::format("{}{} on {}", s.empty() ? "" : ", ", from == to ? std::to_string(from) : std::format("{}..{}", from, to),
                     unit_name(units[d]));
    d = end + 1;
  }
  return s;
}

}  // namespace detail
}  // namespace tessel
