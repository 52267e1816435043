#pragma once
// GEMM operands B kept packed in the layout of oneDNN's matmul kernels, beside the tensors they
// were read from: weights, which every call of a model multiplies by. oneDNN's matmul packs a B
// given in a plain layout itself on every call (into AMX's or AVX-512's blocks); a B given packed
// (a primitive made for format_tag::any, its weights_desc) skips that, which on a 2-core Sapphire
// Rapids made bfloat16 GEMMs of 256 x 512 x 1536 3.4x faster and float32 ones 1.5x (bench_gemm_f32,
// bench_half). The bits are the plain call's (oneDNN runs the same kernel on the same blocks).
//
// A copy is kept while the buffer B lies in lives and is not rewritten (GemmCall::b_buffer,
// runtime/rewritten_buffers.hpp), at most TESSEL_PACKED_OPERANDS_MB of them in all (default 4096;
// 0 keeps none and packs nothing; gemm_batch.hpp's kept_operand_bytes says how much is kept).
#include <cstddef>
#include <cstdint>
#include <memory>

#include <oneapi/dnnl/dnnl.hpp>

namespace tessel::detail {

// When a B is first packed: at its first GEMM (one of many rows, where the packing pass costs less
// than what the packed GEMM saves), or at its second (one of few rows, which reads B once, as
// packing does: only a B read again gains).
enum class PackWhen { first_use, second_use };
// Rows up to which a GEMM counts as one of few (a decode step's, a prefill's last logits).
inline PackWhen pack_when(std::int64_t rows) { return rows > 64 ? PackWhen::first_use : PackWhen::second_use; }

// The packed copy (in `packed`) of B, whose values lie at `b` in the layout `plain` inside
// `buffer`: kept from an earlier call, or made now on `s` (and waited for); null where none is kept
// (a temporary, a rewritten buffer, a B seen once under second_use, or the limit reached).
std::shared_ptr<dnnl::memory const> packed_operand(std::weak_ptr<std::byte> const& buffer, void const* b,
                                                   dnnl::memory::desc const& plain, dnnl::memory::desc const& packed,
                                                   PackWhen when, dnnl::engine const& engine, dnnl::stream& s);

}  // namespace tessel::detail
