#pragma once
// Every device's block of a dot_general, by BLAS GEMM (see src/runtime/local_dot.cpp).
#include <string>

#include "tessel/expr/dot.hpp"
#include "tessel/expr/view.hpp"
#include "tessel/runtime/tensor_impl.hpp"

namespace tessel::detail {

// An operand of local_dot: a value, or a slice or transpose of it read in place (the plan's
// Step::through_view): the view, its global shape and its own sharding, whose blocks the GEMM
// multiplies.
struct DotOperand {
  TensorImpl const& value;
  ViewSpec const* view = nullptr;
  Shape const* view_shape = nullptr;
  NamedSharding const* view_sharding = nullptr;
};

// out's shards (tiled as the plan's partial sharding) = lhs block x rhs block on each device;
// lhs, rhs and out are on the same mesh, tiled consistently with the dimension numbers.
void local_dot(DotOperand const& lhs, DotOperand const& rhs, DotDims const& dims, TensorImpl& out);

// How local_dot runs the devices' GEMMs on a host backend, where all logical devices share the
// host's cores (GPU backends run each device's GEMM on its own stream regardless).
enum class GemmSchedule {
  automatic,            // devices_in_parallel when that keeps every host thread busy, else one_at_a_time
  devices_in_parallel,  // the devices' GEMMs spread over the host threads, each single-threaded
  one_at_a_time,        // one device's GEMM after the other, each multi-threaded by the BLAS
};
// The schedule: set_gemm_schedule's, else the environment's TESSEL_GEMM_SCHEDULE (automatic,
// devices_in_parallel or one_at_a_time; read once), else automatic. For benchmarks and tests.
void set_gemm_schedule(GemmSchedule schedule);
GemmSchedule gemm_schedule();
char const* schedule_name(GemmSchedule schedule);

// Which library runs float32 GEMMs on a host backend built with oneDNN (GPU backends, and host
// builds without oneDNN, always use their BLAS; float64 GEMMs stay on OpenBLAS, oneDNN has none):
enum class F32Gemm {
  automatic,  // oneDNN where it is faster on this CPU (src/runtime/backend/host/gemm_f32.cpp), else OpenBLAS
  openblas,   // every float32 GEMM by OpenBLAS's sgemm
  onednn,     // every float32 GEMM by oneDNN's matmul
};
// The choice: set_f32_gemm's, else the environment's TESSEL_F32_GEMM (automatic, openblas or onednn;
// read once), else automatic. For benchmarks and tests.
void set_f32_gemm(F32Gemm choice);
F32Gemm f32_gemm();
char const* f32_gemm_name(F32Gemm choice);

// The BLAS local_dot calls, as it reports itself (the benchmarks print it).
struct BlasInfo {
  std::string config;     // openblas_get_config(): version and build options
  std::string core;       // openblas_get_corename(): the kernels it runs (OPENBLAS_CORETYPE may choose them)
  std::string threading;  // "OpenMP", "pthreads" or "sequential" (openblas_get_parallel())
  int threads = 1;        // threads one GEMM called outside a parallel region may use
  // Whether a GEMM called inside a host parallel region runs single-threaded on its caller (so that
  // the devices' GEMMs can run side by side without oversubscribing the cores).
  bool single_threaded_in_parallel = false;
  // What multiplies 16-bit operands (runtime/backend/gemm_batch.hpp: runs_16bit_gemms).
  std::string half_gemms;
  // What multiplies float32 operands (f32_gemm()): the library, by which rule, and its vector width.
  std::string f32_gemms;
  // The vector width, in bits, of the kernels that run float32 GEMMs on a host (0 on GPUs): what a
  // benchmark's FMA peak is measured at.
  int f32_vector_bits = 0;
};
BlasInfo blas_info();

}  // namespace tessel::detail
