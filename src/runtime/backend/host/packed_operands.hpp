#pragma once
// GEMM operands B kept packed in the layout of oneDNN's matmul kernels, beside the tensors they
// were read from: weights, which every call of a model multiplies by. oneDNN's matmul packs a B
// given in a plain layout itself on every call (into AMX's or AVX-512's blocks); a B given packed
// (a primitive made for format_tag::any, its weights_desc) skips that pass, so a weight pays for it
// once. The bits are the plain call's (oneDNN runs the same kernel on the same blocks).
//
// A copy is kept while the buffer B lies in lives and is not rewritten (GemmCall::b_buffer,
// runtime/rewritten_buffers.hpp), at most TESSEL_PACKED_OPERANDS_MB of them in all (default 4096;
// 0 keeps none and packs nothing; gemm_batch.hpp's kept_operand_bytes says how much is kept).
#include <cstddef>
#include <memory>

#include <oneapi/dnnl/dnnl.hpp>

namespace tessel::detail {

// The packed copy (in `packed`) of B, whose values lie at `b` in the layout `plain` inside
// `buffer`, for a GEMM of `device` (whose memory_stats count a copy it makes): kept from an
// earlier call, or made now on `s` (and waited for) when this B is read the second time; null
// where none is kept (a temporary, a rewritten buffer, a B read for the first time, or the limit
// reached). Packing at the first read would pack every activation a GEMM reads in place
// (attention's keys), which is read once: the packing pass costs more than it saves there (a
// prefill's attention GEMMs took 1.6x as long).
std::shared_ptr<dnnl::memory const> packed_operand(std::weak_ptr<std::byte> const& buffer, void const* b,
                                                   dnnl::memory::desc const& plain, dnnl::memory::desc const& packed,
                                                   int device, dnnl::engine const& engine, dnnl::stream& s);

// A copy of B (at `b`, in `plain`) in the layout `packed`, queued on `s` (not waited for): what
// packed_operand keeps, and what a GEMM that keeps nothing packs for itself alone.
std::shared_ptr<dnnl::memory const> packed_copy(void const* b, dnnl::memory::desc const& plain,
                                                dnnl::memory::desc const& packed, dnnl::engine const& engine,
                                                dnnl::stream& s);

}  // namespace tessel::detail
