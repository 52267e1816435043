#pragma once
// The backend's BLAS alone, with nothing of tessel around it: row-major float GEMMs on contiguous
// operands in device 0's memory, through the entry point dot_general itself ends in
// (detail::run_gemms: OpenBLAS on host backends, cuBLAS on CUDA), then a fence, so that a timed
// call is complete. The unsharded reference of the GEMM benchmarks: what the BLAS reaches on these
// shapes on this machine, on whichever backend the binary was built for.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "tessel/runtime/backend/gemm_batch.hpp"
#include "tessel/tessel.hpp"

namespace tessel::bench {

class StandaloneGemms {
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  using DeviceView = Kokkos::View<float*, MemSpace, Unmanaged>;
  using HostView = Kokkos::View<float*, Kokkos::HostSpace, Unmanaged>;
  static DeviceView device_view(float* p, std::size_t n) { return DeviceView(p, n); }
  static HostView host_view(float* p, std::size_t n) { return HostView(p, n); }

 public:
  // A buffer of n floats, all `value`, in device 0's memory, kept as long as this object.
  float* buffer(std::int64_t n, float value = 0.01f) {
    Kokkos::View<float*, MemSpace> v(Kokkos::view_alloc(Kokkos::WithoutInitializing, "standalone_gemm"), n);
    Kokkos::deep_copy(v, value);
    buffers_.push_back(v);
    return v.data();
  }
  // A buffer holding `values`, and a buffer's n values back on the host.
  float* buffer(std::vector<float> const& values) {
    float* p = buffer(static_cast<std::int64_t>(values.size()));
    Kokkos::deep_copy(device_view(p, values.size()), host_view(const_cast<float*>(values.data()), values.size()));
    return p;
  }
  static std::vector<float> to_host(float const* p, std::size_t n) {
    std::vector<float> values(n);
    Kokkos::deep_copy(host_view(values.data(), n), device_view(const_cast<float*>(p), n));
    return values;
  }
  // A group of GEMMs issued together, as a BLAS user would issue a batch (a strided-batched call on
  // cuBLAS where the pointer steps allow). C (m x n) = A (m x k) . B (k x n), or B^T with B (n x k).
  struct Gemm {
    std::int64_t m, n, k;
    float const* a;
    float const* b;
    float* c;
    bool b_transposed = false;
  };
  void group(std::vector<Gemm> const& gemms) {
    std::vector<detail::GemmCall<float>> calls;
    std::int64_t largest = 0;
    for (Gemm const& g : gemms) {
      calls.push_back({g.a, g.b, g.c, g.m, g.n, g.k, {false, g.k}, {g.b_transposed, g.b_transposed ? g.k : g.n}, 0});
      largest = std::max(largest, g.m * g.n * g.k);
    }
    groups_.push_back({std::move(calls), largest});
  }
  void operator()() const {
    for (auto const& [calls, largest] : groups_) detail::run_gemms(calls, largest);
    Kokkos::fence();
  }

 private:
  struct Group {
    std::vector<detail::GemmCall<float>> calls;
    std::int64_t largest;
  };
  std::vector<Kokkos::View<float*, MemSpace>> buffers_;
  std::vector<Group> groups_;
};

}  // namespace tessel::bench
