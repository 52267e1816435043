#include "tessel/runtime/block_copy.hpp"

#include <cstdint>
#include <cstring>

namespace tessel::detail {
namespace {

// A region copy reduced to its essentials: `runs` contiguous runs of `run_length` elements, run r
// starting at src_offset(r) / dst_offset(r). Dimensions where the region spans both buffers fully
// are merged into the run, so a row-sharded tensor is one long run per shard.
struct RunPlan {
  int outer_rank = 0;  // dimensions enumerated by the run index
  std::int64_t extent[max_rank]{};
  std::int64_t src_stride[max_rank]{};
  std::int64_t dst_stride[max_rank]{};
  std::int64_t src_base = 0, dst_base = 0;
  std::int64_t runs = 1, run_length = 1;
};

RunPlan plan_runs(Box const& src_box, Box const& dst_box, Box const& region) {
  RunPlan p;
  int rank = static_cast<int>(region.size());
  std::int64_t src_stride = 1, dst_stride = 1;
  std::int64_t sstr[max_rank], dstr[max_rank];
  for (int d = rank; d-- > 0;) {
    sstr[d] = src_stride;
    dstr[d] = dst_stride;
    src_stride *= src_box[d].size();
    dst_stride *= dst_box[d].size();
  }
  for (int d = 0; d < rank; ++d) {
    p.src_base += (region[d].start - src_box[d].start) * sstr[d];
    p.dst_base += (region[d].start - dst_box[d].start) * dstr[d];
  }
  // Merge trailing dimensions into the run while the region covers them in both buffers.
  int inner = rank;
  while (inner > 0) {
    int d = inner - 1;
    p.run_length *= region[d].size();
    --inner;
    bool full = region[d].size() == src_box[d].size() && region[d].size() == dst_box[d].size();
    if (!full) break;
  }
  p.outer_rank = inner;
  for (int d = 0; d < inner; ++d) {
    p.extent[d] = region[d].size();
    p.src_stride[d] = sstr[d];
    p.dst_stride[d] = dstr[d];
    p.runs *= region[d].size();
  }
  return p;
}

// Long runs are cut into chunks so that one contiguous shard still spreads over every thread.
constexpr std::int64_t chunk_elements = 1 << 14;

template <class Word, class Exec>
void copy_words(Exec const& exec, Word const* src, Word* dst, RunPlan const& p) {
  std::int64_t chunks_per_run = (p.run_length + chunk_elements - 1) / chunk_elements;
  Kokkos::parallel_for(
      "tessel::copy_region", Kokkos::RangePolicy<Exec>(exec, 0, p.runs * chunks_per_run),
      KOKKOS_LAMBDA(std::int64_t item) {
        std::int64_t run = item / chunks_per_run;
        std::int64_t chunk = item % chunks_per_run;
        std::int64_t s = p.src_base, d = p.dst_base;
        for (int k = p.outer_rank; k-- > 0;) {
          std::int64_t i = run % p.extent[k];
          run /= p.extent[k];
          s += i * p.src_stride[k];
          d += i * p.dst_stride[k];
        }
        std::int64_t begin = chunk * chunk_elements;
        std::int64_t end = begin + chunk_elements < p.run_length ? begin + chunk_elements : p.run_length;
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
  else
    Kokkos::abort("tessel::copy_region: element size must be 4 or 8");
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
