#pragma once
// The one primitive every data movement is made of: copy a box of the global index space between
// two row-major buffers that hold (possibly different) boxes of it.
#include <cstddef>

#include "tessel/core/box.hpp"
#include "tessel/runtime/device.hpp"

namespace tessel::detail {

// Copies `region` (global coordinates, inside both src_box and dst_box) from src, which holds
// src_box, into dst, which holds dst_box. Runs on `exec`, which must be able to read and write
// both buffers. Asynchronous: fence `exec` before reading dst from elsewhere.
void copy_region(ExecSpace const& exec, std::byte const* src, Box const& src_box, std::byte* dst, Box const& dst_box,
                 Box const& region, std::size_t element_size);
// The same on the host's execution space, for host buffers (packing before a host-to-GPU copy).
void copy_region_on_host(std::byte const* src, Box const& src_box, std::byte* dst, Box const& dst_box,
                         Box const& region, std::size_t element_size);

}  // namespace tessel::detail
