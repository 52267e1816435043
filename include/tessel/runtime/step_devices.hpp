#pragma once
// Waiting for one step of a plan: the devices it reads and writes, fenced (not every device), so
// that a tool timing steps (tools/trace.hpp, tools/profile.hpp) waits only where the step runs.
#include <cstddef>

#include "tessel/plan/plan.hpp"

namespace tessel::detail {

struct RunState;

// Fences this process's devices of the step's operands (as `state` holds them) and of its result.
void fence_step_devices(plan::Plan const& plan, std::size_t step, RunState const& state);

}  // namespace tessel::detail
