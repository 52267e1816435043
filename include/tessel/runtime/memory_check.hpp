#pragma once
// The memory analysis (plan/memory_analysis.hpp) with this process's devices: where they are
// (which share a unit), what a tensor holds, and the check that a plan fits before it runs.
// A device's memory is known from TESSEL_DEVICE_MEMORY (bytes, or a number with KiB, MiB, GiB,
// TiB: a limit per logical device); without it nothing is checked.
#include <cstdint>
#include <optional>

#include "tessel/plan/memory_analysis.hpp"
#include "tessel/runtime/tensor_impl.hpp"

namespace tessel::detail {

// Every device id's unit (another process's devices: its own units, placed as this process's are).
plan::MemoryLayout memory_layout();
// What `t` holds on each device, as the pool allocated it (replicas sharing a buffer once).
plan::ValueMemory held_memory(TensorImpl const& t);
// TESSEL_DEVICE_MEMORY, read on each call (a bad value is a tessel::Error).
std::optional<std::int64_t> device_memory_limit();
// Throws tessel::OutOfMemory, before anything runs, when the plan's peak on a device passes the
// limit: naming the device, the peak, the limit, the step and the largest buffers live there.
void check_plan_fits(plan::Plan const& plan);

}  // namespace tessel::detail
