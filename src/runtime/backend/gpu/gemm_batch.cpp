// GEMMs on GPUs, by the vendor's BLAS (cuBLAS on CUDA, hipBLAS on HIP: gpu/vendor.hpp): one
// handle per device, bound to the stream of the device's Kokkos instance, so a GEMM is ordered
// after the kernels that wrote its operands and before those that read its result, with no fence.
// A device's GEMMs that differ only by constant pointer steps (the batch entries of its block) go
// as one strided-batched call. 16-bit operands go to GemmEx with float sums and a float or 16-bit
// result (rounded once, as it is stored).
//
// The BLAS is column-major: the row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T,
// so B and A are passed in that order with their layouts unchanged.
#include "tessel/runtime/backend/gemm_batch.hpp"

#include <format>
#include <map>
#include <mutex>
#include <type_traits>

#include <Kokkos_Core.hpp>

#include "tessel/core/error.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/local_dot.hpp"

#include "vendor.hpp"

namespace tessel::detail {
namespace {

namespace vendor = backend::vendor;

// `what` is the call's name without the BLAS's prefix ("Sgemm": cublasSgemm, hipblasSgemm).
void check(gpublasStatus_t status, char const* what, int device) {
  if (status != GPUBLAS_STATUS_SUCCESS)
    throw Error(std::format("dot_general: {}{} failed on device {}: {}", vendor::blas_prefix, what, device,
                            vendor::blas_status(status)));
}

// The handle of each device, made at its first GEMM and destroyed when Kokkos finalizes.
gpublasHandle_t handle_of(int id) {
  static std::mutex mutex;
  static std::map<int, gpublasHandle_t> handles;
  std::lock_guard lock(mutex);
  if (handles.empty())
    Kokkos::push_finalize_hook([] {
      std::lock_guard inner(mutex);
      for (auto& [device_id, h] : handles) gpublasDestroy(h);
      handles.clear();
    });
  auto [at, fresh] = handles.try_emplace(id, nullptr);
  if (fresh) {
    ExecSpace const& exec = device(id).exec;
    (void)gpuSetDevice(vendor::gpu_of(exec));  // (a handle belongs to the current GPU)
    check(gpublasCreate(&at->second), "Create", id);
    check(gpublasSetStream(at->second, vendor::stream_of(exec)), "SetStream", id);
  }
  return at->second;
}

gpublasOperation_t op(MatrixLayout const& l) { return l.transposed ? GPUBLAS_OP_T : GPUBLAS_OP_N; }

// The BLAS's name for an operand or result type, for GemmEx.
template <class T>
constexpr gpuDataType_t data_type = std::is_same_v<T, float>      ? GPU_R_32F
                                    : std::is_same_v<T, bfloat16> ? GPU_R_16BF
                                                                  : GPU_R_16F;

// calls[first, first + count) as one BLAS call: strides are the pointer steps between entries.
template <class T, class C>
void launch(std::span<GemmCall<T, C> const> calls, std::size_t first, std::size_t count) {
  GemmCall<T, C> const& e = calls[first];
  gpublasHandle_t h = handle_of(e.device);
  using Scalar = std::conditional_t<std::is_same_v<T, double>, double, float>;  // float sums for 16-bit
  Scalar const one = 1, zero = 0;
  auto const m = static_cast<int>(e.m), n = static_cast<int>(e.n), k = static_cast<int>(e.k);
  auto const lda = static_cast<int>(e.la.ld), ldb = static_cast<int>(e.lb.ld);
  long long sa = 0, sb = 0, sc = 0;
  if (count > 1) {
    GemmCall<T, C> const& next = calls[first + 1];
    sa = next.a - e.a, sb = next.b - e.b, sc = next.c - e.c;
  }
  auto const batch = static_cast<int>(count);
  if constexpr (std::is_same_v<T, float>) {
    if (count == 1)
      check(gpublasSgemm(h, op(e.lb), op(e.la), n, m, k, &one, e.b, ldb, e.a, lda, &zero, e.c, n), "Sgemm",
            e.device);
    else
      check(gpublasSgemmStridedBatched(h, op(e.lb), op(e.la), n, m, k, &one, e.b, ldb, sb, e.a, lda, sa, &zero, e.c, n,
                                      sc, batch),
            "SgemmStridedBatched", e.device);
  } else if constexpr (std::is_same_v<T, double>) {
    if (count == 1)
      check(gpublasDgemm(h, op(e.lb), op(e.la), n, m, k, &one, e.b, ldb, e.a, lda, &zero, e.c, n), "Dgemm",
            e.device);
    else
      check(gpublasDgemmStridedBatched(h, op(e.lb), op(e.la), n, m, k, &one, e.b, ldb, sb, e.a, lda, sa, &zero, e.c, n,
                                      sc, batch),
            "DgemmStridedBatched", e.device);
  } else {  // 16-bit operands, float sums, a float or 16-bit result (tensor or matrix cores)
    if (count == 1)
      check(gpublasGemmEx(h, op(e.lb), op(e.la), n, m, k, &one, e.b, data_type<T>, ldb, e.a, data_type<T>, lda, &zero,
                         e.c, data_type<C>, n, GPUBLAS_COMPUTE_32F, GPUBLAS_GEMM_DEFAULT),
            "GemmEx", e.device);
    else
      check(gpublasGemmStridedBatchedEx(h, op(e.lb), op(e.la), n, m, k, &one, e.b, data_type<T>, ldb, sb, e.a,
                                       data_type<T>, lda, sa, &zero, e.c, data_type<C>, n, sc, batch,
                                       GPUBLAS_COMPUTE_32F, GPUBLAS_GEMM_DEFAULT),
            "GemmStridedBatchedEx", e.device);
  }
}

template <class T, class C>
void run(std::span<GemmCall<T, C> const> calls) {
  for_each_strided_run(calls, [&](std::size_t first, std::size_t count) { launch(calls, first, count); });
}

}  // namespace

void run_gemms(std::span<GemmCall<float> const> calls, std::int64_t) { run(calls); }
void run_gemms(std::span<GemmCall<double> const> calls, std::int64_t) { run(calls); }
bool runs_16bit_gemms(DType operands) noexcept { return operands == DType::bfloat16 || operands == DType::float16; }
void run_gemms(std::span<GemmCall<bfloat16, float> const> calls, std::int64_t) { run(calls); }
void run_gemms(std::span<GemmCall<float16, float> const> calls, std::int64_t) { run(calls); }
void run_gemms(std::span<GemmCall<bfloat16> const> calls, std::int64_t) { run(calls); }
void run_gemms(std::span<GemmCall<float16> const> calls, std::int64_t) { run(calls); }
std::string half_gemm_info() { return std::format("{} GemmEx (float sums)", vendor::blas_name); }
// cuBLAS and hipBLAS read B as it lies: nothing is kept beside the tensors.
std::size_t kept_operand_bytes() { return 0; }
std::size_t kept_operand_bytes(int) { return 0; }
void limit_kept_operands_for_test(std::size_t) {}

BlasInfo blas_info() {
  BlasInfo info;
  info.config = vendor::blas_version();
  gpuDeviceProp_t props{};
  if (gpuGetDeviceProperties(&props, vendor::gpu_of(ExecSpace())) == gpuSuccess) info.core = props.name;
  info.threading = std::format("one {} stream per device", vendor::gpu_name);
  info.half_gemms = half_gemm_info();
  return info;
}

}  // namespace tessel::detail
