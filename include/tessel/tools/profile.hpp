#pragma once
// Where the time of one jitted call goes, next to what the cost model expected: profile(f, args...)
// runs f(args...) once, timing each instruction it runs between fences, and returns one row per
// instruction with the measured time beside the estimate (explain's, from the cost model), flops
// and bytes (plan/cost_analysis.hpp). Printed, it is a table; call f once before for warm numbers
// (the first call also plans and allocates). A trace that is on goes on recording meanwhile.
//
//   auto mlp = tessel::jit(block);
//   std::cout << tessel::profile(mlp, x, w1, w2);
#include <cstddef>
#include <iosfwd>
#include <string>
#include <type_traits>
#include <vector>

#include "tessel/runtime/jit.hpp"
#include "tessel/runtime/step_observer.hpp"

namespace tessel {

struct ProfileRow {
  std::size_t step;          // the instruction's index in its plan (plan::Plan::steps)
  std::string label;         // as explain, Kokkos Tools and traces name it
  std::string kind;          // its cost analysis's kind ("gemm", "fused", "all_reduce", ...)
  double measured_us;        // this call's time for it, all devices together
  double estimate_us;        // the cost analysis's (kernels: the cost model's roofline)
  double flops;              // per device
  double bytes_read, bytes_written;  // per device
};

struct Profile {
  std::vector<ProfileRow> rows;  // the instructions in the order they ran
  double call_us = 0;            // the whole call: the instructions plus planning, look-up, allocation

  [[nodiscard]] double measured_us() const;  // the instructions' sum
  [[nodiscard]] double estimate_us() const;
};

// The table: one line per instruction (measured, estimate, their ratio, GFLOP/s and GB/s per
// device), then the totals and the time outside the instructions.
std::string to_string(Profile const& p);
std::ostream& operator<<(std::ostream& os, Profile const& p);

namespace detail {
// Watches the steps run while it lives (passing them on to a trace that is on).
class ProfileRecorder final : public StepObserver {
 public:
  ProfileRecorder();
  ~ProfileRecorder();
  ProfileRecorder(ProfileRecorder const&) = delete;
  ProfileRecorder& operator=(ProfileRecorder const&) = delete;
  void before(plan::Plan const& plan, std::size_t step, RunState const& state) override;
  void after(plan::Plan const& plan, std::size_t step, RunState const& state) override;
  void start_call();
  Profile finish();

 private:
  StepObserver* previous_;
  double start_us_ = 0, call_start_us_ = 0;
  std::vector<std::pair<plan::Plan const*, std::size_t>> ran_;
  std::vector<double> measured_;
};

template <class F>
inline constexpr bool is_jitted = false;
template <class F>
inline constexpr bool is_jitted<Jitted<F>> = true;
}  // namespace detail

template <class F, class... Args>
Profile profile(Jitted<F> const& f, Args const&... args) {
  detail::ProfileRecorder recorder;
  recorder.start_call();
  (void)f(args...);
  return recorder.finish();
}

// Anything else: a compile error that says what to pass.
template <class F, class... Args>
  requires(!detail::is_jitted<std::remove_cvref_t<F>>)
Profile profile(F const&, Args const&...) {
  static_assert(detail::is_jitted<std::remove_cvref_t<F>>,
                "tessel::profile(f, args...) profiles a jitted function: pass tessel::jit(f), not f itself");
  return {};
}

}  // namespace tessel
