#pragma once
// Launching a kernel over [0, n). Tiny kernels run inline on the calling thread where the backend
// says that is cheaper (backend::inline_kernel_work), and the lambda is the same code either way.
#include <cstdint>

#include <Kokkos_Core.hpp>

#include "tessel/runtime/backend/kernel_traits.hpp"
#include "tessel/runtime/stream.hpp"

namespace tessel::detail {

// The name Kokkos Tools see for a kernel: the label of the plan step running on this thread (the
// executor sets it, runtime/execute.hpp), so the copies inside a collective carry the name of the
// collective the plan lists; `fallback` outside a plan.
inline thread_local char const* running_step_label = nullptr;
inline char const* kernel_label(char const* fallback) { return running_step_label ? running_step_label : fallback; }

// Runs f(i) for i in [0, n) on `exec` now: host work, or work already in its device's order (the
// body of an enqueue).
template <class Exec, class F>
void for_each_index_now(Exec const& exec, char const* label, std::int64_t n, std::int64_t work, F const& f) {
  if constexpr (backend::inline_kernel_work > 0) {
    if (work < backend::inline_kernel_work) {
      for (std::int64_t i = 0; i < n; ++i) f(i);
      return;
    }
  }
  Kokkos::parallel_for(label, Kokkos::RangePolicy<Exec>(exec, 0, n), f);
}

// Runs f(i) for i in [0, n) on device d, in its order (runtime/stream.hpp).
template <class F>
void for_each_index(Device const& d, char const* label, std::int64_t n, std::int64_t work, F const& f) {
  enqueue(d, label, [n, work, f](ExecSpace const& exec, char const* name) { for_each_index_now(exec, name, n, work, f); });
}

}  // namespace tessel::detail
