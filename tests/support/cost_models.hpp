#pragma once
// Cost models the planner tests plan under.
#include <limits>

#include "tessel/plan/cost_model.hpp"

namespace tessel::test {

// The defaults' bandwidths without latencies, and kernels (a dot's GEMM) at no cost: the planner
// then chooses by bytes moved, as XLA's partitioner does (on small test shapes the default 5 us
// per message step would decide most choices, and the GEMMs' roofline would trade bytes for flops).
inline plan::CostModel bandwidth_bound() {
  plan::CostModel m;
  m.latency_us = 0;
  for (plan::AlphaBeta* ab : {&m.all_gather, &m.reduce_scatter, &m.all_reduce, &m.all_to_all, &m.collective_permute})
    ab->latency_us = 0;
  double const unlimited = std::numeric_limits<double>::infinity();
  m.kernel = plan::Roofline{0.0, unlimited, unlimited};
  return m;
}

}  // namespace tessel::test
