#pragma once
// Host backends run one step's GEMMs, every device's, as one piece of work: the devices share the
// host's threads, and the BLAS schedules the calls over them (gemm_batch.cpp). It goes on the
// first call's device after every other device's queued work, and every other device waits for
// it (runtime/stream.hpp).
#include <algorithm>
#include <span>
#include <vector>

#include "tessel/runtime/backend/gemm_batch.hpp"
#include "tessel/runtime/launch.hpp"
#include "tessel/runtime/stream.hpp"

namespace tessel::detail {

template <class Call, class Run>
void enqueue_gemms(std::span<Call const> calls, Run run) {
  if (calls.empty()) return;
  std::vector<int> devices;
  for (auto const& c : calls)
    if (std::find(devices.begin(), devices.end(), c.device) == devices.end()) devices.push_back(c.device);
  int const lead[] = {devices.front()};
  wait_for_all(lead, devices);
  enqueue(device(lead[0]), kernel_label("tessel::gemm"),
          [run, copy = std::vector<Call>(calls.begin(), calls.end())](ExecSpace const&, char const*) {
            run(std::span<Call const>(copy));
          });
  wait_for_all(devices, lead);
}

}  // namespace tessel::detail
