#pragma once
// Launching a kernel over [0, n). Tiny kernels run inline on the calling thread where the backend
// says that is cheaper (backend::inline_kernel_work), and the lambda is the same code either way.
#include <cstdint>

#include <Kokkos_Core.hpp>

#include "tessel/runtime/backend/kernel_traits.hpp"

namespace tessel::detail {

// The name Kokkos Tools see for a kernel: the label of the plan step running on this thread (the
// executor sets it, runtime/execute.hpp), so the copies inside a collective carry the name of the
// collective the plan lists; `fallback` outside a plan.
inline thread_local char const* running_step_label = nullptr;
inline char const* kernel_label(char const* fallback) { return running_step_label ? running_step_label : fallback; }

template <class Exec, class F>
void for_each_index(Exec const& exec, char const* label, std::int64_t n, std::int64_t work, F const& f) {
  if constexpr (backend::inline_kernel_work > 0) {
    if (work < backend::inline_kernel_work) {
      for (std::int64_t i = 0; i < n; ++i) f(i);
      return;
    }
  }
  Kokkos::parallel_for(label, Kokkos::RangePolicy<Exec>(exec, 0, n), f);
}

}  // namespace tessel::detail
