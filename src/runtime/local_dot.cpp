// Each device's part of a dot_general: its lhs and rhs blocks, brought to [batch, free, contract]
// and [batch, contract, free] order when they are not already, multiplied by the BLAS.
#include "tessel/runtime/launch.hpp"
#include "tessel/runtime/local_dot.hpp"

#include <cblas.h>

#include <algorithm>
#include <format>
#include <limits>

#include "tessel/core/error.hpp"
#include "tessel/runtime/buffer_pool.hpp"

namespace tessel::detail {
namespace {

using Order = FixedVector<std::uint8_t, max_rank>;

bool identity(Order const& order) {
  for (std::size_t i = 0; i < order.size(); ++i)
    if (order[i] != i) return false;
  return true;
}

// dst = src with dimensions reordered: dst dimension k is src dimension order[k].
template <class T>
void permute(ExecSpace const& exec, T const* src, Shape const& shape, Order const& order, T* dst) {
  struct Geometry {
    int rank;
    std::int64_t extent[max_rank];       // dst extents
    std::int64_t src_stride[max_rank];   // src stride of dst dimension k
  } g{};
  g.rank = static_cast<int>(order.size());
  std::int64_t strides[max_rank];
  std::int64_t st = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    strides[d] = st;
    st *= shape[d];
  }
  for (int k = 0; k < g.rank; ++k) {
    g.extent[k] = shape[order[static_cast<std::size_t>(k)]];
    g.src_stride[k] = strides[order[static_cast<std::size_t>(k)]];
  }
  Kokkos::parallel_for(
      kernel_label("tessel::transpose"), Kokkos::RangePolicy<ExecSpace>(exec, 0, shape.num_elements()), KOKKOS_LAMBDA(std::int64_t i) {
        std::int64_t rest = i, s = 0;
        for (int k = g.rank; k-- > 0;) {
          s += (rest % g.extent[k]) * g.src_stride[k];
          rest /= g.extent[k];
        }
        dst[i] = src[s];
      });
}

template <class T>
void gemm(std::int64_t m, std::int64_t n, std::int64_t k, T const* a, T const* b, T* c) {
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                1.0f, a, static_cast<int>(k), b, static_cast<int>(n), 0.0f, c, static_cast<int>(n));
  else
    cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                1.0, a, static_cast<int>(k), b, static_cast<int>(n), 0.0, c, static_cast<int>(n));
}

template <class T>
void local_dot_typed(TensorImpl const& lhs, TensorImpl const& rhs, DotDims const& dims, TensorImpl& out) {
  Shape ls = lhs.sharding.shard_shape(lhs.shape), rs = rhs.sharding.shard_shape(rhs.shape);
  DotMapping const map = dot_mapping(dims, ls.size(), rs.size());
  Order lorder, rorder;
  std::int64_t batch = 1, m = 1, n = 1, k = 1;
  for (auto d : dims.lhs_batch) lorder.push_back(d), batch *= ls[d];
  for (auto d : map.lhs_free) lorder.push_back(d), m *= ls[d];
  for (auto d : dims.lhs_contract) lorder.push_back(d), k *= ls[d];
  for (auto d : dims.rhs_batch) rorder.push_back(d);
  for (auto d : dims.rhs_contract) rorder.push_back(d);
  for (auto d : map.rhs_free) rorder.push_back(d), n *= rs[d];

  // The CBLAS interface takes int sizes: a larger per-device GEMM would be silently truncated.
  constexpr std::int64_t blas_max = std::numeric_limits<int>::max();
  if (m > blas_max || n > blas_max || k > blas_max)
    throw Error(std::format("dot_general: each device's GEMM would be {} x {} times {} x {}, beyond the 32-bit sizes "
                            "of the BLAS interface; shard the operands over more devices",
                            m, k, k, n));
  fence_all_devices();  // the operands may still be being written
  for (std::size_t pos : local_positions(out)) {
    auto const& exec = device(out.shards[pos].device).exec;
    auto const* a = reinterpret_cast<T const*>(lhs.shards[pos].bytes.data());
    auto const* b = reinterpret_cast<T const*>(rhs.shards[pos].bytes.data());
    auto* c = reinterpret_cast<T*>(out.shards[pos].bytes.data());
    std::shared_ptr<std::byte> a_tmp, b_tmp;
    if (!identity(lorder)) {
      a_tmp = acquire_device_memory(static_cast<std::size_t>(ls.num_elements()) * sizeof(T));
      permute(exec, a, ls, lorder, reinterpret_cast<T*>(a_tmp.get()));
      a = reinterpret_cast<T const*>(a_tmp.get());
    }
    if (!identity(rorder)) {
      b_tmp = acquire_device_memory(static_cast<std::size_t>(rs.num_elements()) * sizeof(T));
      permute(exec, b, rs, rorder, reinterpret_cast<T*>(b_tmp.get()));
      b = reinterpret_cast<T const*>(b_tmp.get());
    }
    exec.fence();
    if (k == 0) {
      std::fill(c, c + batch * m * n, T(0));
      continue;
    }
    for (std::int64_t i = 0; i < batch; ++i) gemm<T>(m, n, k, a + i * m * k, b + i * k * n, c + i * m * n);
  }
}

}  // namespace

void local_dot(TensorImpl const& lhs, TensorImpl const& rhs, DotDims const& dims, TensorImpl& out) {
  if constexpr (!Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible) {
    throw Error("dot_general: this build's devices are GPUs; the cuBLAS path is not written yet");
  } else {
    if (lhs.dtype != rhs.dtype || lhs.dtype != out.dtype)
      throw Error(std::format("dot_general: operands are {} and {}; convert them to one float type first",
                              name(lhs.dtype), name(rhs.dtype)));
    if (out.dtype == DType::float32) local_dot_typed<float>(lhs, rhs, dims, out);
    else if (out.dtype == DType::float64) local_dot_typed<double>(lhs, rhs, dims, out);
    else throw Error("dot_general: int32 operands are not supported by the BLAS; use astype<float>()");
  }
}

}  // namespace tessel::detail
