#pragma once
// A watcher of the executor's steps: the trace writer (tools/trace.hpp) and the profiler
// (tools/profile.hpp). While one is installed the executor calls it around every step it runs;
// while none is, the step loop pays one branch per step for it.
#include <cstddef>

#include "tessel/plan/plan.hpp"

namespace tessel::detail {

struct RunState;

class StepObserver {
 public:
  // Around plan.steps[step]: `before` sees the values the step reads, `after` the one it made.
  virtual void before(plan::Plan const& plan, std::size_t step, RunState const& state) = 0;
  virtual void after(plan::Plan const& plan, std::size_t step, RunState const& state) = 0;

 protected:
  ~StepObserver() = default;
};

// The observer in force, or null. Changed only between runs, by the thread that runs plans. Until
// the first step of the process it is one that reads TESSEL_TRACE (tools/trace.hpp) and then
// replaces itself with the trace writer or with null.
extern StepObserver* active_step_observer;

}  // namespace tessel::detail
