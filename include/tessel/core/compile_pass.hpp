#pragma once
// Which compiler, and which of its passes, compiles this code: asked here and nowhere else. A CUDA
// or HIP build runs each source through a host pass and a device pass; code that must differ
// between them (an intrinsic that exists only on the device, a front end that cannot run the
// constexpr planner) tests these macros, each defined 0 or 1, never the vendors' own.
//   TESSEL_NVCC              nvcc (both passes): its front end's limits
//   TESSEL_HIPCC             hipcc (both passes)
//   TESSEL_GPU_COMPILER      nvcc, hipcc or a SYCL compiler (both passes)
//   TESSEL_CUDA_DEVICE_PASS  nvcc's device pass (__CUDA_ARCH__)
//   TESSEL_HIP_DEVICE_PASS   hipcc's device pass
//   TESSEL_SYCL_DEVICE_PASS  a SYCL device pass
//   TESSEL_DEVICE_PASS       any of the three

#if defined(__CUDACC__)
#define TESSEL_NVCC 1
#else
#define TESSEL_NVCC 0
#endif

#if defined(__HIPCC__)
#define TESSEL_HIPCC 1
#else
#define TESSEL_HIPCC 0
#endif

#if TESSEL_NVCC || TESSEL_HIPCC || defined(SYCL_LANGUAGE_VERSION)
#define TESSEL_GPU_COMPILER 1
#else
#define TESSEL_GPU_COMPILER 0
#endif

#if defined(__CUDA_ARCH__)
#define TESSEL_CUDA_DEVICE_PASS 1
#else
#define TESSEL_CUDA_DEVICE_PASS 0
#endif

#if defined(__HIP_DEVICE_COMPILE__)
#define TESSEL_HIP_DEVICE_PASS 1
#else
#define TESSEL_HIP_DEVICE_PASS 0
#endif

#if defined(__SYCL_DEVICE_ONLY__)
#define TESSEL_SYCL_DEVICE_PASS 1
#else
#define TESSEL_SYCL_DEVICE_PASS 0
#endif

#if TESSEL_CUDA_DEVICE_PASS || TESSEL_HIP_DEVICE_PASS || TESSEL_SYCL_DEVICE_PASS
#define TESSEL_DEVICE_PASS 1
#else
#define TESSEL_DEVICE_PASS 0
#endif
