#pragma once
// CUDA's names for what src/runtime/backend/gpu/ calls (gpu/vendor.hpp): the runtime, cuBLAS, and
// Kokkos::Cuda's accessors. hip/vendor.hpp names the same things for HIP; nothing else differs.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <format>
#include <string>

#include <Kokkos_Core.hpp>

// Runtime: errors, devices, streams, events.
#define gpuError_t cudaError_t
#define gpuSuccess cudaSuccess
#define gpuGetErrorName cudaGetErrorName
#define gpuGetErrorString cudaGetErrorString
#define gpuGetLastError cudaGetLastError
#define gpuGetDeviceCount cudaGetDeviceCount
#define gpuSetDevice cudaSetDevice
#define gpuDeviceProp_t cudaDeviceProp
#define gpuGetDeviceProperties cudaGetDeviceProperties
#define gpuDeviceCanAccessPeer cudaDeviceCanAccessPeer
#define gpuDeviceEnablePeerAccess cudaDeviceEnablePeerAccess
#define gpuErrorPeerAccessAlreadyEnabled cudaErrorPeerAccessAlreadyEnabled
#define gpuStream_t cudaStream_t
#define gpuStreamCreateWithFlags cudaStreamCreateWithFlags
#define gpuStreamNonBlocking cudaStreamNonBlocking
#define gpuStreamWaitEvent cudaStreamWaitEvent
#define gpuEvent_t cudaEvent_t
#define gpuEventCreateWithFlags cudaEventCreateWithFlags
#define gpuEventDisableTiming cudaEventDisableTiming
#define gpuEventRecord cudaEventRecord
#define gpuEventDestroy cudaEventDestroy

// Graphs: stream capture, instantiation, launch.
#define gpuGraph_t cudaGraph_t
#define gpuGraphExec_t cudaGraphExec_t
#define gpuStreamBeginCapture cudaStreamBeginCapture
#define gpuStreamEndCapture cudaStreamEndCapture
#define gpuStreamCaptureModeRelaxed cudaStreamCaptureModeRelaxed
#define gpuGraphInstantiateWithFlags cudaGraphInstantiateWithFlags
#define gpuGraphLaunch cudaGraphLaunch
#define gpuGraphDestroy cudaGraphDestroy
#define gpuGraphExecDestroy cudaGraphExecDestroy

// BLAS: handles, GEMMs, and the types of cublasGemmEx.
#define gpublasStatus_t cublasStatus_t
#define GPUBLAS_STATUS_SUCCESS CUBLAS_STATUS_SUCCESS
#define gpublasHandle_t cublasHandle_t
#define gpublasCreate cublasCreate
#define gpublasDestroy cublasDestroy
#define gpublasSetStream cublasSetStream
#define gpublasOperation_t cublasOperation_t
#define GPUBLAS_OP_N CUBLAS_OP_N
#define GPUBLAS_OP_T CUBLAS_OP_T
#define gpublasSgemm cublasSgemm
#define gpublasSgemmStridedBatched cublasSgemmStridedBatched
#define gpublasDgemm cublasDgemm
#define gpublasDgemmStridedBatched cublasDgemmStridedBatched
#define gpublasGemmEx cublasGemmEx
#define gpublasGemmStridedBatchedEx cublasGemmStridedBatchedEx
#define GPUBLAS_COMPUTE_32F CUBLAS_COMPUTE_32F
#define GPUBLAS_GEMM_DEFAULT CUBLAS_GEMM_DEFAULT
#define gpuDataType_t cudaDataType_t
#define GPU_R_32F CUDA_R_32F
#define GPU_R_16BF CUDA_R_16BF
#define GPU_R_16F CUDA_R_16F

namespace tessel::backend::vendor {

inline constexpr char const* gpu_name = "CUDA";
inline constexpr char const* api_prefix = "cuda";  // of the runtime's calls, in error messages
inline constexpr char const* blas_name = "cuBLAS";
inline constexpr char const* blas_prefix = "cublas";

inline int gpu_of(Kokkos::Cuda const& exec) { return exec.cuda_device(); }
inline cudaStream_t stream_of(Kokkos::Cuda const& exec) { return exec.cuda_stream(); }

inline std::string blas_status(cublasStatus_t status) {
  return std::format("{} ({})", cublasGetStatusName(status), cublasGetStatusString(status));
}
inline std::string blas_version() {
  return std::format("cuBLAS {}.{}.{}", CUBLAS_VER_MAJOR, CUBLAS_VER_MINOR, CUBLAS_VER_PATCH);
}

}  // namespace tessel::backend::vendor

// Open MPI says whether it was built CUDA-aware in its extensions header, and whether this run can
// use it (gpu/devices.cpp includes <mpi-ext.h> before this header).
#if defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
#define TESSEL_MPI_GPU_AWARE() (MPIX_Query_cuda_support() == 1)
#endif
