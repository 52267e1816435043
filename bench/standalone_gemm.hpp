#pragma once
// The backend's BLAS alone, with nothing of tessel around it: row-major GEMMs on contiguous
// operands in device 0's memory, through the entry point dot_general itself ends in
// (detail::run_gemms: OpenBLAS on host backends, cuBLAS on CUDA; for 16-bit operands oneDNN or
// cuBLAS's GemmEx, summing in float and rounding as they store), then a fence, so that a timed
// call is complete. The unsharded reference of the GEMM benchmarks: what the BLAS reaches on these
// shapes on this machine, on whichever backend the binary was built for.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "tessel/runtime/backend/gemm_batch.hpp"
#include "tessel/tessel.hpp"

namespace tessel::bench {

template <class T>
class BasicStandaloneGemms {
 public:
  // A buffer of n elements, all `value`, in device 0's memory, kept as long as this object.
  T* buffer(std::int64_t n, float value = 0.01f) {
    Kokkos::View<T*, MemSpace> v(Kokkos::view_alloc(Kokkos::WithoutInitializing, "standalone_gemm"), n);
    Kokkos::deep_copy(v, static_cast<T>(value));
    buffers_.push_back(v);
    return v.data();
  }
  // A buffer holding `values`, and a buffer's n values back on the host.
  T* buffer(std::vector<T> const& values) {
    T* p = buffer(static_cast<std::int64_t>(values.size()));
    Kokkos::deep_copy(device_view(p, values.size()), host_view(const_cast<T*>(values.data()), values.size()));
    return p;
  }
  static std::vector<T> to_host(T const* p, std::size_t n) {
    std::vector<T> values(n);
    Kokkos::deep_copy(host_view(values.data(), n), device_view(const_cast<T*>(p), n));
    return values;
  }
  // A group of GEMMs issued together, as a BLAS user would issue a batch (a strided-batched call
  // where the pointer steps allow). C (m x n) = A (m x k) . B (k x n), or B^T with B (n x k).
  struct Gemm {
    std::int64_t m, n, k;
    T const* a;
    T const* b;
    T* c;
    bool b_transposed = false;
    // B a weight, which a backend may keep laid out for its kernels as it does a tensor it reads
    // in place on every call (GemmCall::b_buffer): so that the BLAS alone runs as tessel's GEMMs do.
    bool weight = false;
  };
  void group(std::vector<Gemm> const& gemms) {
    std::vector<detail::GemmCall<T>> calls;
    std::int64_t largest = 0;
    for (Gemm const& g : gemms) {
      calls.push_back({g.a, g.b, g.c, g.m, g.n, g.k, {false, g.k}, {g.b_transposed, g.b_transposed ? g.k : g.n}, 0,
                       g.weight ? weight_buffer(g.b) : std::weak_ptr<std::byte>()});
      largest = std::max(largest, g.m * g.n * g.k);
    }
    groups_.push_back({std::move(calls), largest});
  }
  // A handle on the weight at b (GemmCall::b_buffer), valid as long as this object (not owning:
  // the buffers own the memory).
  std::weak_ptr<std::byte> weight_buffer(T const* b) {
    auto* p = reinterpret_cast<std::byte*>(const_cast<T*>(b));
    for (auto const& h : weights_)
      if (h.get() == p) return h;
    return weights_.emplace_back(p, [](std::byte*) {});
  }
  // Their flops: 2 per multiply-add.
  [[nodiscard]] double flops() const {
    double f = 0;
    for (auto const& group : groups_)
      for (auto const& c : group.calls) f += 2.0 * static_cast<double>(c.m * c.n) * static_cast<double>(c.k);
    return f;
  }
  void operator()() const {
    for (auto const& [calls, largest] : groups_)
      detail::run_gemms(std::span<detail::GemmCall<T> const>(calls), largest);
    Kokkos::fence();
  }

 private:
  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  static Kokkos::View<T*, MemSpace, Unmanaged> device_view(T* p, std::size_t n) {
    return Kokkos::View<T*, MemSpace, Unmanaged>(p, n);
  }
  static Kokkos::View<T*, Kokkos::HostSpace, Unmanaged> host_view(T* p, std::size_t n) {
    return Kokkos::View<T*, Kokkos::HostSpace, Unmanaged>(p, n);
  }
  struct Group {
    std::vector<detail::GemmCall<T>> calls;
    std::int64_t largest;
  };
  std::vector<std::shared_ptr<std::byte>> weights_;
  std::vector<Kokkos::View<T*, MemSpace>> buffers_;
  std::vector<Group> groups_;
};

using StandaloneGemms = BasicStandaloneGemms<float>;

}  // namespace tessel::bench
