#pragma once
// Cost models the planner tests plan under.
#include "tessel/plan/cost_model.hpp"

namespace tessel::test {

// The defaults' bandwidths without latencies: the planner then chooses by bytes moved, as XLA's
// partitioner does (on small test shapes the default 5 us per message step decides most choices).
inline plan::CostModel bandwidth_bound() {
  plan::CostModel m;
  m.latency_us = 0;
  for (plan::AlphaBeta* ab : {&m.all_gather, &m.reduce_scatter, &m.all_reduce, &m.all_to_all, &m.collective_permute})
    ab->latency_us = 0;
  return m;
}

}  // namespace tessel::test
