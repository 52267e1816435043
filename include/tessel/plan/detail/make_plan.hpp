#pragma once
// The whole planner, as constexpr code: sharding propagation (propagate.hpp), each family's rules
// (rules/), common values (cse.hpp) and the instruction list (schedule.hpp). One planner, run by
// the compiler for static_jit (plan/static_plan.hpp) and at run time for every other plan
// (make_plan, src/plan/planner.cpp compiles it once).
#include "tessel/plan/detail/cse.hpp"
#include "tessel/plan/detail/planner.hpp"
#include "tessel/plan/detail/propagate.hpp"
#include "tessel/plan/detail/rules.hpp"
#include "tessel/plan/detail/schedule.hpp"
