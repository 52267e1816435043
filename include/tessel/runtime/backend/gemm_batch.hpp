#pragma once
// The GEMMs of one dot_general (one per batch entry of each device's block), run by the backend's
// BLAS: OpenBLAS on host backends (src/runtime/backend/host/), cuBLAS on CUDA, one handle per
// device bound to its instance's stream (src/runtime/backend/cuda/). local_dot describes the
// GEMMs; the backend runs them.
#include <cstdint>
#include <span>

namespace tessel::detail {

// How the BLAS reads an operand: transposed or not, and its leading dimension (row-major).
struct MatrixLayout {
  bool transposed = false;
  std::int64_t ld = 0;
};

// Row-major C (m x n, leading dimension n) = op(A) (m x k) . op(B) (k x n), on `device`.
template <class T>
struct GemmCall {
  T const* a;
  T const* b;
  T* c;
  std::int64_t m, n, k;
  MatrixLayout la, lb;
  int device;
};

// Runs the calls, each on its device; `largest` is the largest call's m * n * k. On return the
// results are complete (host backends) or ordered before any later work on each device's
// instance (device backends).
void run_gemms(std::span<GemmCall<float> const> calls, std::int64_t largest);
void run_gemms(std::span<GemmCall<double> const> calls, std::int64_t largest);

}  // namespace tessel::detail
