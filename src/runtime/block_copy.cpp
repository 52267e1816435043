#include "tessel/runtime/block_copy.hpp"

#include <cstdint>
#include <cstring>

#include "tessel/runtime/launch.hpp"
#include "tessel/runtime/run_plan.hpp"

namespace tessel::detail {
namespace {

template <class Word, class Exec>
void copy_words(Exec const& exec, Word const* src, Word* dst, RunPlan const& p) {
  std::int64_t chunks_per_run = (p.run_length + run_chunk - 1) / run_chunk;
  for_each_index(
      exec, kernel_label("tessel::copy_region"), p.runs * chunks_per_run, p.runs * p.run_length, KOKKOS_LAMBDA(std::int64_t item) {
        std::int64_t run = item / chunks_per_run;
        std::int64_t chunk = item % chunks_per_run;
        std::int64_t s, d;
        run_offsets(p, run, s, d);
        std::int64_t begin = chunk * run_chunk;
        std::int64_t end = begin + run_chunk < p.run_length ? begin + run_chunk : p.run_length;
        for (std::int64_t e = begin; e < end; ++e) dst[d + e] = src[s + e];
      });
}

template <class Exec>
void copy_region_any(Exec const& exec, std::byte const* src, Box const& src_box, std::byte* dst, Box const& dst_box,
                     Box const& region, std::size_t element_size) {
  if (region.empty()) return;
  RunPlan p = plan_runs(src_box, dst_box, region);
  if (element_size == 4)
    copy_words(exec, reinterpret_cast<std::uint32_t const*>(src), reinterpret_cast<std::uint32_t*>(dst), p);
  else if (element_size == 8)
    copy_words(exec, reinterpret_cast<std::uint64_t const*>(src), reinterpret_cast<std::uint64_t*>(dst), p);
  else if (element_size == 2)
    copy_words(exec, reinterpret_cast<std::uint16_t const*>(src), reinterpret_cast<std::uint16_t*>(dst), p);
  else if (element_size == 1)
    copy_words(exec, reinterpret_cast<std::uint8_t const*>(src), reinterpret_cast<std::uint8_t*>(dst), p);
  else
    Kokkos::abort("tessel::copy_region: element size must be 1, 2, 4 or 8");
}

}  // namespace

void copy_region(ExecSpace const& exec, std::byte const* src, Box const& src_box, std::byte* dst, Box const& dst_box,
                 Box const& region, std::size_t element_size) {
  copy_region_any(exec, src, src_box, dst, dst_box, region, element_size);
}

void copy_region_on_host(std::byte const* src, Box const& src_box, std::byte* dst, Box const& dst_box,
                         Box const& region, std::size_t element_size) {
  copy_region_any(HostExecSpace(), src, src_box, dst, dst_box, region, element_size);
}

}  // namespace tessel::detail
