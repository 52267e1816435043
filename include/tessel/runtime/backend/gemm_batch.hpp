#pragma once
// The GEMMs of one dot_general (one per batch entry of each device's block), run by the backend's
// BLAS: OpenBLAS on host backends (src/runtime/backend/host/), with oneDNN for 16-bit operands
// where the build found it; cuBLAS on CUDA and hipBLAS on HIP, one handle per device bound to its
// instance's stream (src/runtime/backend/gpu/). local_dot describes the GEMMs; the backend runs them.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "tessel/core/dtype.hpp"
#include "tessel/core/half.hpp"

namespace tessel::detail {

// How the BLAS reads an operand: transposed or not, and its leading dimension (row-major).
struct MatrixLayout {
  bool transposed = false;
  std::int64_t ld = 0;
};

// Row-major C (m x n, leading dimension n) = op(A) (m x k) . op(B) (k x n), on `device`. T is the
// operands' type, C the result's (float, or 16-bit, for 16-bit operands: their products are
// summed in float either way).
template <class T, class C = T>
struct GemmCall {
  T const* a;
  T const* b;
  C* c;
  std::int64_t m, n, k;
  MatrixLayout la, lb;
  int device;
  // The buffer B lies in when B is read in place from a tensor's shard; empty for a temporary, and
  // inside a graph capture (whose replays rewrite its buffers). While that buffer lives and is not
  // rewritten (runtime/rewritten_buffers.hpp) B keeps its values, so a backend may keep a copy of
  // B laid out for its kernels (backend/host/packed_operands.hpp): weights, read by every call.
  std::weak_ptr<std::byte> b_buffer{};
};

// Runs the calls, each on its device; `largest` is the largest call's m * n * k. In the devices'
// order (runtime/stream.hpp): each call after the work queued on its device so far, and the
// device's later work after it. Host backends run one step's calls as one piece of work on the
// first call's device (they share the host's threads, backend::one_kernel_for_all_devices): every
// other device of the calls waits for it.
void run_gemms(std::span<GemmCall<float> const> calls, std::int64_t largest);
void run_gemms(std::span<GemmCall<double> const> calls, std::int64_t largest);
// 16-bit operands multiplied as they are, their products summed in float (what jnp.dot of bfloat16
// or float16 operands computes), without widening the operands first: AMX, AVX512-BF16 or
// AVX512-FP16 on hosts that have them, tensor cores on GPUs. The result is float, or the operands'
// type: the float sums rounded once, as they are stored. Only where runs_16bit_gemms says so for
// the operands' dtype (a host without such a unit, or without oneDNN, does not); elsewhere
// local_dot widens the operands and calls the float GEMM.
bool runs_16bit_gemms(DType operands) noexcept;
void run_gemms(std::span<GemmCall<bfloat16, float> const> calls, std::int64_t largest);
void run_gemms(std::span<GemmCall<float16, float> const> calls, std::int64_t largest);
void run_gemms(std::span<GemmCall<bfloat16> const> calls, std::int64_t largest);
void run_gemms(std::span<GemmCall<float16> const> calls, std::int64_t largest);
// The bytes of the GEMM operands the backend keeps laid out for its kernels (GemmCall::b_buffer),
// beside the tensors' own: 0 where it keeps none; in all, or of those made for one device's GEMMs
// (a global id; memory_stats reports them). And for the tests, a limit on them in place of the
// backend's own (0: keep none).
std::size_t kept_operand_bytes();
std::size_t kept_operand_bytes(int device);
void limit_kept_operands_for_test(std::size_t bytes);
// What runs 16-bit GEMMs, for blas_info: per dtype, the library and the CPU unit, or that they are
// widened and why.
std::string half_gemm_info();

// Splits `calls` into runs that one strided-batched BLAS call can take: consecutive calls on one
// device, of one shape and layout, whose pointers advance by the same positive steps; calls
// `run(first, count)` for each.
template <class T, class C, class Run>
void for_each_strided_run(std::span<GemmCall<T, C> const> calls, Run&& run) {
  auto same_shape = [](GemmCall<T, C> const& x, GemmCall<T, C> const& y) {
    return x.device == y.device && x.m == y.m && x.n == y.n && x.k == y.k && x.la.transposed == y.la.transposed &&
           x.la.ld == y.la.ld && x.lb.transposed == y.lb.transposed && x.lb.ld == y.lb.ld;
  };
  for (std::size_t first = 0; first < calls.size();) {
    std::size_t end = first + 1;
    if (end < calls.size() && same_shape(calls[first], calls[end])) {
      auto const sa = calls[end].a - calls[first].a, sb = calls[end].b - calls[first].b,
                 sc = calls[end].c - calls[first].c;
      if (sa > 0 && sb > 0 && sc > 0)
        while (end < calls.size() && same_shape(calls[first], calls[end]) && calls[end].a - calls[end - 1].a == sa &&
               calls[end].b - calls[end - 1].b == sb && calls[end].c - calls[end - 1].c == sc)
          ++end;
    }
    run(first, end - first);
    first = end;
  }
}

}  // namespace tessel::detail
