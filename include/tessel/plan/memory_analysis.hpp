#pragma once
// memory_analysis: how many bytes each device holds while a plan runs, as JAX's
// compiled.memory_analysis() says it of a compiled program: its arguments, its outputs, what it
// makes in between, and the peak of what is live at once over the instruction list in the order
// the executor runs it. Followed the way the executor fills and drops its value slots: a step's
// result lives until the plan ends (or until the step that overwrites its slot, as a reduction's
// collective does its partial results), a view holds no memory of its own, replicas of one unit
// that share a buffer (an all-reduce's result, a replicated argument, a region computed once per
// replica: runtime/shared_buffers.hpp) hold it once, uneven blocks are counted per device, and
// every buffer is counted as the pool allocates it (core/buffer_bytes.hpp). What the runtime
// measures (runtime/memory_stats.hpp) is checked against it in tests.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessel/core/buffer_bytes.hpp"
#include "tessel/plan/plan.hpp"
#include "tessel/plan/memory_types.hpp"
#include "tessel/plan/reshard.hpp"

namespace tessel::plan {

// The memory a tensor of `shape` and `dtype_bytes` takes with `sharding`; replicas on one unit
// share their buffer when `replicas_share` (device_put's and an all-reduce's results do).
constexpr ValueMemory value_memory(Shape const& shape, int dtype_bytes, NamedSharding const& sharding,
                                   MemoryLayout const& layout, bool replicas_share);
// ... where position p uses position owner[p]'s buffer (itself: its own).
constexpr ValueMemory value_memory(Shape const& shape, int dtype_bytes, NamedSharding const& sharding,
                                   MemoryLayout const& layout, std::vector<std::size_t> const& owner);

// The analysis of one plan. `arguments[node]`, where given, is a tensor input's memory as it is
// held (runtime: measured from the tensor); otherwise a tensor input is taken as device_put makes it.
// A constant expression too (static_plan's peak): without `name_largest`, largest_live and
// peak_label are left empty (naming them walks the plan a second time).
constexpr MemoryAnalysis memory_analysis(Plan const& plan, MemoryLayout const& layout,
                                         std::span<std::optional<ValueMemory> const> arguments = {},
                                         bool name_largest = true);

// explain's section: "memory, per device: ..." (a line, then the largest buffers at the peak).
std::string memory_analysis_text(MemoryAnalysis const& m, std::string_view indent = "");

}  // namespace tessel::plan

// The definitions: constexpr, so static_plan runs them in the compiler.
#include "tessel/plan/detail/memory_walk.hpp"
