#pragma once
// A box of the global index space, inside two row-major buffers that hold (possibly different)
// boxes of it, seen as contiguous runs: the shape of every copy and region-wise combine.
#include <cstdint>

#include <Kokkos_Macros.hpp>

#include "tessel/core/box.hpp"

namespace tessel::detail {

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

inline RunPlan plan_runs(Box const& src_box, Box const& dst_box, Box const& region) {
  RunPlan p;
  int rank = static_cast<int>(region.size());
  std::int64_t sstr[max_rank], dstr[max_rank];
  row_major_strides(src_box.extent(), sstr);
  row_major_strides(dst_box.extent(), dstr);
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


// Long runs are cut into chunks of this many elements so that one contiguous shard still spreads
// over every thread.
inline constexpr std::int64_t run_chunk = 1 << 14;

// Offsets of run `run` in the source and destination buffers.
KOKKOS_INLINE_FUNCTION void run_offsets(RunPlan const& p, std::int64_t run, std::int64_t& s, std::int64_t& d) {
  s = p.src_base;
  d = p.dst_base;
  for (int k = p.outer_rank; k-- > 0;) {
    std::int64_t i = run % p.extent[k];
    run /= p.extent[k];
    s += i * p.src_stride[k];
    d += i * p.dst_stride[k];
  }
}

}  // namespace tessel::detail
