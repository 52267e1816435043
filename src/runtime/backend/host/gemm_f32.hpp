#pragma once
// float32 GEMMs by oneDNN's matmul on host backends built with oneDNN (gemm_f32.cpp), for
// gemm_batch.cpp, which runs every other GEMM by OpenBLAS.
#include <cstdint>
#include <string>

#include "tessel/runtime/backend/gemm_batch.hpp"

namespace tessel::detail {

// Whether float32 GEMMs go to oneDNN (f32_gemm(), and in automatic mode the rule of gemm_f32.cpp: by
// the CPU's vector widths, whatever the shape); false without oneDNN.
bool f32_gemm_by_onednn();
// Runs one GEMM by oneDNN on the calling thread's share of the host: all OpenMP threads from outside
// a parallel region, the caller alone inside one (as OpenBLAS's OpenMP build does). False, with
// nothing written, where oneDNN has no matmul for it: the caller runs OpenBLAS instead.
bool onednn_sgemm(GemmCall<float> const& g);
// For blas_info: which library runs float32 GEMMs, by which rule, at which vector width; and the
// width in bits of the one that runs large GEMMs.
std::string f32_gemm_info();
int f32_gemm_vector_bits();

}  // namespace tessel::detail
