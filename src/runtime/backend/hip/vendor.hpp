#pragma once
// HIP's names for what src/runtime/backend/gpu/ calls (gpu/vendor.hpp): the runtime, hipBLAS, and
// Kokkos::HIP's accessors. cuda/vendor.hpp names the same things for CUDA; nothing else differs.
#include <hip/hip_runtime.h>
#include <hipblas/hipblas.h>

#include <format>
#include <string>

#include <Kokkos_Core.hpp>

// Runtime: errors, devices, streams, events.
#define gpuError_t hipError_t
#define gpuSuccess hipSuccess
#define gpuGetErrorName hipGetErrorName
#define gpuGetErrorString hipGetErrorString
#define gpuGetLastError hipGetLastError
#define gpuGetDeviceCount hipGetDeviceCount
#define gpuSetDevice hipSetDevice
#define gpuDeviceProp_t hipDeviceProp_t
#define gpuGetDeviceProperties hipGetDeviceProperties
#define gpuDeviceCanAccessPeer hipDeviceCanAccessPeer
#define gpuDeviceEnablePeerAccess hipDeviceEnablePeerAccess
#define gpuErrorPeerAccessAlreadyEnabled hipErrorPeerAccessAlreadyEnabled
#define gpuStream_t hipStream_t
#define gpuStreamCreateWithFlags hipStreamCreateWithFlags
#define gpuStreamNonBlocking hipStreamNonBlocking
#define gpuStreamWaitEvent hipStreamWaitEvent
#define gpuEvent_t hipEvent_t
#define gpuEventCreateWithFlags hipEventCreateWithFlags
#define gpuEventDisableTiming hipEventDisableTiming
#define gpuEventRecord hipEventRecord
#define gpuEventDestroy hipEventDestroy

// Graphs: stream capture, instantiation, launch.
#define gpuGraph_t hipGraph_t
#define gpuGraphExec_t hipGraphExec_t
#define gpuStreamBeginCapture hipStreamBeginCapture
#define gpuStreamEndCapture hipStreamEndCapture
#define gpuStreamCaptureModeRelaxed hipStreamCaptureModeRelaxed
#define gpuGraphInstantiateWithFlags hipGraphInstantiateWithFlags
#define gpuGraphLaunch hipGraphLaunch
#define gpuGraphDestroy hipGraphDestroy
#define gpuGraphExecDestroy hipGraphExecDestroy

// BLAS: handles, GEMMs, and the types of GemmEx. The Ex calls are hipBLAS 2's _v2 ones, which take
// hipDataType and hipblasComputeType_t as cuBLAS does (the plain names take the deprecated
// hipblasDatatype_t unless every includer defines HIPBLAS_V2).
#define gpublasStatus_t hipblasStatus_t
#define GPUBLAS_STATUS_SUCCESS HIPBLAS_STATUS_SUCCESS
#define gpublasHandle_t hipblasHandle_t
#define gpublasCreate hipblasCreate
#define gpublasDestroy hipblasDestroy
#define gpublasSetStream hipblasSetStream
#define gpublasOperation_t hipblasOperation_t
#define GPUBLAS_OP_N HIPBLAS_OP_N
#define GPUBLAS_OP_T HIPBLAS_OP_T
#define gpublasSgemm hipblasSgemm
#define gpublasSgemmStridedBatched hipblasSgemmStridedBatched
#define gpublasDgemm hipblasDgemm
#define gpublasDgemmStridedBatched hipblasDgemmStridedBatched
#define gpublasGemmEx hipblasGemmEx_v2
#define gpublasGemmStridedBatchedEx hipblasGemmStridedBatchedEx_v2
#define GPUBLAS_COMPUTE_32F HIPBLAS_COMPUTE_32F
#define GPUBLAS_GEMM_DEFAULT HIPBLAS_GEMM_DEFAULT
#define gpuDataType_t hipDataType
#define GPU_R_32F HIP_R_32F
#define GPU_R_16BF HIP_R_16BF
#define GPU_R_16F HIP_R_16F

namespace tessel::backend::vendor {

inline constexpr char const* gpu_name = "HIP";
inline constexpr char const* api_prefix = "hip";  // of the runtime's calls, in error messages
inline constexpr char const* blas_name = "hipBLAS";
inline constexpr char const* blas_prefix = "hipblas";

inline int gpu_of(Kokkos::HIP const& exec) { return exec.hip_device(); }
inline hipStream_t stream_of(Kokkos::HIP const& exec) { return exec.hip_stream(); }

inline std::string blas_status(hipblasStatus_t status) { return hipblasStatusToString(status); }
inline std::string blas_version() {
  return std::format("hipBLAS {}.{}.{} (HIP {}.{}.{})", hipblasVersionMajor, hipblasVersionMinor, hipblasVersionPatch,
                     HIP_VERSION_MAJOR, HIP_VERSION_MINOR, HIP_VERSION_PATCH);
}

}  // namespace tessel::backend::vendor

// Open MPI says whether it was built ROCm-aware in its extensions header, and whether this run can
// use it (gpu/devices.cpp includes <mpi-ext.h> before this header).
#if defined(MPIX_ROCM_AWARE_SUPPORT) && MPIX_ROCM_AWARE_SUPPORT
#define TESSEL_MPI_GPU_AWARE() (MPIX_Query_rocm_support() == 1)
#endif
