// The profiler (tools/profile.hpp): a step observer that times each step between fences and puts
// the times beside the plan's cost analysis.
#include "tessel/tools/profile.hpp"

#include <chrono>
#include <format>
#include <ostream>

#include <Kokkos_Core.hpp>

#include "tessel/core/error.hpp"
#include "tessel/plan/cost_analysis.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/step_devices.hpp"
#include "tessel/tools/trace.hpp"

namespace tessel {

namespace detail {
namespace {
double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

ProfileRecorder::ProfileRecorder() {
  trace_from_environment();  // a trace the environment asks for records this call too
  if (active_step_observer && dynamic_cast<ProfileRecorder*>(active_step_observer))
    throw Error("tessel::profile: another profile is running (profile cannot nest)");
  previous_ = active_step_observer;
  active_step_observer = this;
}

ProfileRecorder::~ProfileRecorder() {
  // Back to what was watching before, unless it stopped meanwhile (a trace ended in the call).
  if (active_step_observer == this) active_step_observer = previous_;
}

void ProfileRecorder::before(plan::Plan const& plan, std::size_t step, RunState const& state) {
  if (previous_) previous_->before(plan, step, state);
  fence_step_devices(plan, step, state);  // (a step's time is from fence to fence, where it runs)
  start_us_ = now_us();
}

void ProfileRecorder::after(plan::Plan const& plan, std::size_t step, RunState const& state) {
  fence_step_devices(plan, step, state);
  measured_.push_back(now_us() - start_us_);
  ran_.emplace_back(&plan, step);
  if (previous_) previous_->after(plan, step, state);
}

void ProfileRecorder::start_call() {
  fence_all_devices();  // (the call's time is from fence to fence: work before it, on any device, first)
  call_start_us_ = now_us();
}

Profile ProfileRecorder::finish() {
  fence_all_devices();  // (the call's work, on every device it used)
  Profile p;
  p.call_us = now_us() - call_start_us_;
  // Each plan's cost analysis once (a plan stays in the cache while the program runs).
  plan::Plan const* analysed = nullptr;
  std::vector<plan::InstructionCost> costs;
  for (std::size_t r = 0; r < ran_.size(); ++r) {
    auto [ran, k] = ran_[r];
    if (ran != analysed) {
      costs = plan::cost_analysis(*ran);
      analysed = ran;
    }
    auto const& c = costs[k];
    p.rows.push_back({k, ran->steps[k].label, c.kind, measured_[r], c.estimate_us, c.flops, c.bytes_read,
                      c.bytes_written});
  }
  return p;
}
}  // namespace detail

double Profile::measured_us() const {
  double s = 0;
  for (auto const& r : rows) s += r.measured_us;
  return s;
}
double Profile::estimate_us() const {
  double s = 0;
  for (auto const& r : rows) s += r.estimate_us;
  return s;
}

std::string to_string(Profile const& p) {
  std::size_t width = 11;
  for (auto const& r : p.rows) width = std::max(width, r.label.size());
  std::string s = std::format("{:>3}  {:<{}}  {:>12}  {:>12}  {:>9}  {:>10}  {:>9}\n", "#", "instruction", width,
                              "measured us", "estimate us", "meas/est", "GFLOP/s", "GB/s");
  for (auto const& r : p.rows) {
    std::string ratio = r.estimate_us > 0 ? std::format("{:.2f}", r.measured_us / r.estimate_us) : "-";
    double gflops = r.measured_us > 0 ? r.flops / r.measured_us / 1e3 : 0;
    double gbps = r.measured_us > 0 ? (r.bytes_read + r.bytes_written) / r.measured_us / 1e3 : 0;
    s += std::format("{:>3}  {:<{}}  {:>12.1f}  {:>12.1f}  {:>9}  {:>10.2f}  {:>9.2f}\n", r.step, r.label, width,
                     r.measured_us, r.estimate_us, ratio, gflops, gbps);
  }
  s += std::format("{} instructions: measured {:.1f} us, estimated {:.1f} us; the call took {:.1f} us ({:.1f} us "
                   "outside the instructions: plan look-up or planning, allocation, launches)\n",
                   p.rows.size(), p.measured_us(), p.estimate_us(), p.call_us, p.call_us - p.measured_us());
  return s;
}

std::ostream& operator<<(std::ostream& os, Profile const& p) { return os << to_string(p); }

}  // namespace tessel
