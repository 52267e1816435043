// The memory analysis with this process's devices, and the check before a plan first runs
// (runtime/memory_check.hpp).
#include "tessel/runtime/memory_check.hpp"

#include <cerrno>
#include <cstdlib>
#include <format>
#include <limits>
#include <string>

#include "tessel/core/error.hpp"
#include "tessel/runtime/backend/devices.hpp"
#include "tessel/runtime/backend/gemm_batch.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/distributed.hpp"

namespace tessel::detail {

plan::MemoryLayout memory_layout() {
  plan::MemoryLayout layout;
  layout.bfloat16_gemm = runs_16bit_gemms(DType::bfloat16);
  layout.float16_gemm = runs_16bit_gemms(DType::float16);
  int const local = local_device_count();
  int const first = distributed::process_index() * local;
  std::vector<int> local_units(static_cast<std::size_t>(local));
  for (int i = 0; i < local; ++i) local_units[static_cast<std::size_t>(i)] = backend::unit_of(device(first + i).exec);
  int const n = device_count();
  layout.unit.resize(static_cast<std::size_t>(n));
  constexpr int units_per_process = 1 << 16;
  for (int id = 0; id < n; ++id)
    layout.unit[static_cast<std::size_t>(id)] =
        distributed::process_of(id) * units_per_process + local_units[static_cast<std::size_t>(id % local)];
  return layout;
}

plan::ValueMemory held_memory(TensorImpl const& t) {
  std::vector<std::size_t> owner(t.shards.size());
  for (std::size_t p = 0; p < t.shards.size(); ++p) {
    owner[p] = p;
    if (!t.shards[p].addressable || t.shards[p].bytes.size() == 0) continue;
    for (std::size_t q = 0; q < p; ++q)
      if (owner[q] == q && t.shards[q].addressable && t.shards[q].bytes.data() == t.shards[p].bytes.data()) {
        owner[p] = q;
        break;
      }
  }
  return plan::value_memory(t.shape, static_cast<int>(size_of(t.dtype)), t.sharding, memory_layout(), owner);
}

std::optional<std::int64_t> device_memory_limit() {
  char const* env = std::getenv("TESSEL_DEVICE_MEMORY");
  if (env == nullptr || *env == '\0') return std::nullopt;
  auto bad = [&] {
    return Error(std::format("TESSEL_DEVICE_MEMORY='{}' is not a size: give bytes, or a whole number with KiB, MiB, "
                             "GiB or TiB (for example 16GiB)",
                             env));
  };
  char* end = nullptr;
  errno = 0;
  unsigned long long const n = std::strtoull(env, &end, 10);
  if (end == env || errno == ERANGE || *env == '-') throw bad();
  std::string_view const unit(end);
  int shift = 0;
  if (unit == "KiB") shift = 10;
  else if (unit == "MiB") shift = 20;
  else if (unit == "GiB") shift = 30;
  else if (unit == "TiB") shift = 40;
  else if (!unit.empty()) throw bad();
  if (n == 0 || n > (std::numeric_limits<std::uint64_t>::max() >> (shift + 1))) throw bad();
  return static_cast<std::int64_t>(n << shift);
}

void check_plan_fits(plan::Plan const& plan) {
  auto const limit = device_memory_limit();
  if (!limit || plan.steps.empty()) return;
  auto const m = plan::memory_analysis(plan, memory_layout());
  if (m.device < 0 || m.peak_bytes <= *limit) return;
  std::string largest;
  for (auto const& b : m.largest_live) largest += std::format("{}{} ({} bytes)", largest.empty() ? "" : ", ", b.what, b.bytes);
  throw OutOfMemory(
      std::format("out of memory, found before running: the plan needs {} bytes ({:.3g} GiB) on device {} at step {}, "
                  "but a device has {} bytes ({:.3g} GiB; TESSEL_DEVICE_MEMORY); live there: {}. Shard the "
                  "largest of them over more devices, or use a smaller batch",
                  m.peak_bytes, static_cast<double>(m.peak_bytes) / (1 << 30), m.device,
                  m.peak_step < 0 ? std::string("start (its arguments alone)") : m.peak_label,
                  *limit, static_cast<double>(*limit) / (1 << 30), largest),
      static_cast<std::size_t>(m.peak_bytes));
}

}  // namespace tessel::detail
