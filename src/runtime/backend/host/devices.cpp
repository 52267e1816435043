// Host backends: logical devices are views of one host, its one unit.
#include "tessel/runtime/backend/devices.hpp"

#include <new>

namespace tessel {
namespace backend {

namespace {
constexpr std::align_val_t alignment{64};  // Kokkos' own alignment
}  // namespace

Units available_units() { return {}; }

std::string unit_name(int) { return "the host"; }

int unit_of(ExecSpace const&) noexcept { return 0; }

// Plain aligned heap memory, so that a tensor outliving Kokkos (destroyed after its ScopeGuard
// ended) still frees safely.
void* allocate_device_bytes(ExecSpace const&, std::size_t bytes) noexcept {
  return ::operator new(bytes, alignment, std::nothrow);
}

void free_device_bytes(int, void* memory, std::size_t) noexcept { ::operator delete(memory, alignment); }

// One thread pool serves every logical device, so every device uses the default instance and a
// kernel still gets all cores: partitioning 2 cores into 8 pools would make each device's kernel
// single-threaded or worse.
std::vector<ExecSpace> make_device_instances(std::span<int const> units) {
  return std::vector<ExecSpace>(units.size(), ExecSpace());
}

// Device memory is host memory.
bool mpi_reads_device_memory() noexcept { return true; }

}  // namespace backend

std::string_view platform_name() { return "cpu"; }

}  // namespace tessel
