// Each device's part of a dot_general: its lhs and rhs blocks, brought to [batch, free, contract]
// and [batch, contract, free] order when they are not already (or read in place when their strides
// allow), multiplied by the backend's BLAS (runtime/backend/gemm_batch.hpp).
#include "tessel/runtime/launch.hpp"
#include "tessel/runtime/local_dot.hpp"
#include "tessel/runtime/block_copy.hpp"
#include "tessel/runtime/stream.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdlib>
#include <format>
#include <limits>
#include <optional>
#include <utility>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/runtime/backend/gemm_batch.hpp"
#include "tessel/runtime/backend/copy_shape.hpp"
#include "tessel/runtime/backend/kernel_traits.hpp"
#include "tessel/runtime/buffer_pool.hpp"
#include "tessel/runtime/capture.hpp"
#include "tessel/runtime/region_space.hpp"

namespace tessel::detail {
namespace {

using Order = FixedVector<std::uint8_t, max_rank>;

bool identity(Order const& order) {
  for (std::size_t i = 0; i < order.size(); ++i)
    if (order[i] != i) return false;
  return true;
}

// An operand's block seen as one matrix per batch index, in place: element (r, c) of batch entry
// `batch` at offset(batch) + r * row_stride + c * col_stride, where the rows merge the dimensions
// `rows` and the columns `cols` (each list in order). A BLAS reads it without a copy when one of the
// two strides is 1: NoTrans with ld = row_stride, or Trans with ld = col_stride. Attention's
// q . k^T and p . v (batch dimensions between the others) are such operands.
struct StridedOperand {
  bool transposed = false;
  std::int64_t ld = 0;
  FixedVector<std::int64_t, max_rank> batch_strides;  // per batch dimension, in the dot's batch order
  FixedVector<std::int64_t, max_rank> batch_extents;
  [[nodiscard]] std::int64_t offset(std::int64_t batch) const {
    std::int64_t off = 0;
    for (std::size_t j = batch_extents.size(); j-- > 0;) {
      off += (batch % batch_extents[j]) * batch_strides[j];
      batch /= batch_extents[j];
    }
    return off;
  }
};

// The dimensions `dims` (of extent > 1) as one index with one stride, if they are laid out one
// inside the other in order; {extent, stride} with stride 0 for no dimension (any stride will do).
std::optional<std::pair<std::int64_t, std::int64_t>> merged(Shape const& shape, std::int64_t const* strides,
                                                            FixedVector<std::uint8_t, max_rank> const& dims) {
  std::int64_t extent = 1, stride = 0;
  for (auto d : dims) {
    if (shape[d] == 1) continue;
    if (stride != 0 && stride != strides[d] * shape[d]) return std::nullopt;
    extent *= shape[d];
    stride = strides[d];
  }
  return std::pair{extent, stride};
}

std::optional<StridedOperand> strided_operand(Shape const& shape, std::int64_t const* strides,
                                              FixedVector<std::uint8_t, max_rank> const& batch,
                                              FixedVector<std::uint8_t, max_rank> const& rows,
                                              FixedVector<std::uint8_t, max_rank> const& cols) {
  auto r = merged(shape, strides, rows), c = merged(shape, strides, cols);
  if (!r || !c) return std::nullopt;
  auto [row_extent, row_stride] = *r;
  auto [col_extent, col_stride] = *c;
  StridedOperand out;
  for (auto b : batch) {
    out.batch_strides.push_back(strides[b]);
    out.batch_extents.push_back(shape[b]);
  }
  // A missing side (extent 1) may take whatever stride suits the BLAS.
  if (col_stride == 0) col_stride = 1;
  if (row_stride == 0) row_stride = col_stride == 1 ? col_extent : 1;
  if (col_stride == 1 && row_stride >= col_extent) {
    out.ld = row_stride;
  } else if (row_stride == 1 && col_stride >= row_extent) {
    out.transposed = true;
    out.ld = col_stride;
  } else {
    return std::nullopt;
  }
  if (out.ld > std::numeric_limits<int>::max()) return std::nullopt;  // the BLAS's int sizes
  return out;
}

// A permutation's geometry, by value for the kernel. (At namespace scope: nvcc refuses a
// function-local type in a device lambda's captures.)
struct PermuteGeometry {
  int outer;                          // dst dimensions that index runs (all but a kept innermost one)
  std::int64_t extent[max_rank];      // dst extents
  std::int64_t src_stride[max_rank];  // src stride of dst dimension k
  std::int64_t run, chunk, chunks;    // elements per run (contiguous in both), per work item; items per run
};

// dst = src (of `shape`, element (i...) at sum of i_d * strides[d]) with dimensions reordered
// (dst dimension k is src dimension order[k]), converted to
// the GEMM's type G on the way (16-bit floats are multiplied as floats). When the innermost
// dimension stays innermost (attention's (b, h, s, d) -> (b, s, h, d)), its runs are contiguous in
// both: a work item copies the copy shape's chunk of one run (a whole run on hosts, in a loop the
// compiler vectorizes; one element on GPUs, neighbouring threads on neighbouring elements), and
// splits its index into coordinates once per run instead of once per element.
template <class T, class G = T>
void permute(Device const& dev, T const* src, Shape const& shape, std::int64_t const* strides, Order const& order,
             G* dst) {
  std::int64_t const n = shape.num_elements();
  if (n == 0) return;
  PermuteGeometry g{};
  int const rank = static_cast<int>(order.size());
  for (int k = 0; k < rank; ++k) {
    g.extent[k] = shape[order[static_cast<std::size_t>(k)]];
    g.src_stride[k] = strides[order[static_cast<std::size_t>(k)]];
  }
  bool const keeps_inner = rank > 0 && order[static_cast<std::size_t>(rank - 1)] == rank - 1 && strides[rank - 1] == 1;
  g.outer = keeps_inner ? rank - 1 : rank;
  g.run = keeps_inner ? g.extent[rank - 1] : 1;
  g.chunk = std::min(g.run, backend::copies_on<ExecSpace>::chunk);
  g.chunks = (g.run + g.chunk - 1) / g.chunk;
  enqueue(dev, kernel_label("tessel::transpose"), [g, n, src, dst](ExecSpace const& exec, char const* label) {
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecSpace>(exec, 0, n / g.run * g.chunks),
      KOKKOS_LAMBDA(std::int64_t item) {
        std::int64_t const run = item / g.chunks, begin = (item % g.chunks) * g.chunk;
        std::int64_t const end = begin + g.chunk < g.run ? begin + g.chunk : g.run;
        std::int64_t rest = run, s = 0;
        for (int k = g.outer; k-- > 0;) {
          s += (rest % g.extent[k]) * g.src_stride[k];
          rest /= g.extent[k];
        }
        G* d = dst + run * g.run;
        T const* from = src + s;
        for (std::int64_t e = begin; e < end; ++e) d[e] = static_cast<G>(static_cast<compute_t<T>>(from[e]));
      });
  });
}

// n elements of type From as type To, in place of a GEMM operand or from a GEMM's result.
template <class From, class To>
void convert(Device const& dev, From const* src, std::int64_t n, To* dst) {
  enqueue(dev, kernel_label("tessel::convert"), [src, n, dst](ExecSpace const& exec, char const* label) {
    Kokkos::parallel_for(
        label, Kokkos::RangePolicy<ExecSpace>(exec, 0, n),
        KOKKOS_LAMBDA(std::int64_t i) { dst[i] = static_cast<To>(static_cast<compute_t<From>>(src[i])); });
  });
}

// set_gemm_schedule's choice, else TESSEL_GEMM_SCHEDULE's (read once), else automatic.
std::atomic<int> chosen_schedule{-1};

// The choice environment variable `variable` names (choices[0], automatic, when it is unset or
// empty); an Error listing the names otherwise.
template <class E, std::size_t N>
E named_in_environment(char const* variable, std::array<E, N> const& choices, char const* (*name)(E)) {
  char const* env = std::getenv(variable);
  if (env == nullptr || *env == '\0') return choices[0];
  std::string names;
  for (E c : choices) {
    if (std::string_view(env) == name(c)) return c;
    names += std::string(names.empty() ? "" : ", ") + name(c);
  }
  throw Error(std::format("{}='{}' is not one of {}", variable, env, names));
}

GemmSchedule schedule_from_environment() {
  return named_in_environment("TESSEL_GEMM_SCHEDULE",
                              std::array{GemmSchedule::automatic, GemmSchedule::devices_in_parallel,
                                         GemmSchedule::one_at_a_time},
                              schedule_name);
}

// set_f32_gemm's choice, else TESSEL_F32_GEMM's (read once), else automatic.
std::atomic<int> chosen_f32_gemm{-1};

F32Gemm f32_gemm_from_environment() {
  return named_in_environment("TESSEL_F32_GEMM", std::array{F32Gemm::automatic, F32Gemm::openblas, F32Gemm::onednn},
                              f32_gemm_name);
}

// Device `pos`'s block of a GEMM operand as it lies in memory: the value's shard, or the view's
// block within it (runtime/region_space.hpp's view_layout: the shard's strides, an offset).
struct Block {
  std::byte const* data;
  DType dtype;
  Shape shape;
  std::int64_t strides[max_rank]{};
  bool row_major = true;
};

Block block_of(DotOperand const& o, std::size_t pos) {
  ShardBuffer const& shard = o.value.shards[pos];
  Block b{shard.bytes.data(), o.value.dtype, shard.index.extent()};
  if (!o.view) {
    row_major_strides(b.shape, b.strides);
    return b;
  }
  Shape const own = o.view_sharding->shard_shape(*o.view_shape, static_cast<int>(pos));
  LeafLayout const l = view_layout(*o.view, b.shape, own);
  if (l.shape.num_elements() > 0) b.data += l.offset * static_cast<std::int64_t>(size_of(b.dtype));
  b.shape = l.shape;
  std::copy(l.stride, l.stride + max_rank, b.strides);
  std::int64_t row_major[max_rank];
  row_major_strides(b.shape, row_major);
  for (std::size_t d = 0; d < b.shape.size(); ++d)
    b.row_major = b.row_major && (b.shape[d] == 1 || b.strides[d] == row_major[d]);
  return b;
}

// The operands' and the result's dtypes may differ from the GEMM's: it reads operands of type In,
// sums in T and writes Out (In = Out = T but for 16-bit operands of a backend with a 16-bit GEMM,
// which writes float or their own type). An operand of another dtype than In is converted into a
// temporary in GEMM order, and a result of another dtype than Out is written into an Out temporary
// that is rounded into it (jnp.dot of bfloat16 accumulates in float and rounds once).
template <class T, class In = T, class Out = T>
void local_dot_typed(DotOperand const& lhs, DotOperand const& rhs, DotDims const& dims, TensorImpl& out) {
  auto rank = [](DotOperand const& o) { return o.view ? o.view_shape->size() : o.value.shape.size(); };
  DotMapping const map = dot_mapping(dims, rank(lhs), rank(rhs));
  // One GEMM per batch entry of each device's block; a device's sizes are its own (an uneven
  // split makes the last devices' blocks short, or empty).
  std::vector<GemmCall<In, Out>> gemms;
  std::vector<std::shared_ptr<std::byte>> temporaries;
  struct Rounding {  // a GEMM result in an Out temporary, to be converted into the result's shard
    Out const* from;
    std::byte* to;
    std::int64_t n;
    int device;
  };
  std::vector<Rounding> roundings;
  std::int64_t largest = 0;  // multiply-adds of the largest GEMM
  for (std::size_t pos : local_positions(out)) {
    Block const lhs_block = block_of(lhs, pos), rhs_block = block_of(rhs, pos);
    Shape const &ls = lhs_block.shape, &rs = rhs_block.shape;
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
      throw Error(std::format("dot_general: device {}'s GEMM would be {} x {} times {} x {}, beyond the 32-bit sizes "
                              "of the BLAS interface; shard the operands over more devices",
                              out.shards[pos].device, m, k, k, n));
    if (batch * m * n == 0) continue;
    auto* c = reinterpret_cast<Out*>(out.shards[pos].bytes.data());
    if (k == 0) {  // an empty contraction (also a device past an uneven contracting end): zeros
      fill_bytes(device(out.shards[pos].device), out.shards[pos].bytes.data(), out.shards[pos].bytes.size(),
                 std::byte{0});
      continue;
    }
    Device const& exec = device(out.shards[pos].device);
    if (out.dtype != dtype_of<Out>) {
      auto tmp = acquire_device_memory(exec, static_cast<std::size_t>(batch * m * n) * sizeof(Out));
      c = reinterpret_cast<Out*>(tmp.get());
      roundings.push_back({c, out.shards[pos].bytes.data(), batch * m * n, out.shards[pos].device});
      temporaries.push_back(std::move(tmp));
    }
    // Each operand read in place when its block is a strided matrix per batch entry
    // (strided_operand) of the GEMM's type, or of another type laid out row-major (converted in
    // its layout); else copied into GEMM order (and type) by a transpose kernel of its own.
    auto in_place = [](Block const& b, std::optional<StridedOperand> const& s) {
      return s && (b.dtype == dtype_of<In> || b.row_major);
    };
    auto lhs_strided = strided_operand(ls, lhs_block.strides, dims.lhs_batch, map.lhs_free, dims.lhs_contract);
    auto rhs_strided = strided_operand(rs, rhs_block.strides, dims.rhs_batch, dims.rhs_contract, map.rhs_free);
    if (!in_place(lhs_block, lhs_strided)) lhs_strided.reset();
    if (!in_place(rhs_block, rhs_strided)) rhs_strided.reset();
    MatrixLayout const la = lhs_strided ? MatrixLayout{lhs_strided->transposed, lhs_strided->ld} : MatrixLayout{false, k};
    MatrixLayout const lb = rhs_strided ? MatrixLayout{rhs_strided->transposed, rhs_strided->ld} : MatrixLayout{false, n};
    // An operand in GEMM order and type: read in place, or permuted and/or converted into a
    // temporary (a strided row-major operand of another dtype keeps its layout).
    auto operand = [&](Block const& b, Order const& order, bool strided) -> In const* {
      bool const reorder = !strided && !(b.row_major && identity(order));
      if (b.dtype == dtype_of<In> && !reorder) return reinterpret_cast<In const*>(b.data);
      auto tmp = acquire_device_memory(exec, static_cast<std::size_t>(b.shape.num_elements()) * sizeof(In));
      auto* dst = reinterpret_cast<In*>(tmp.get());
      if constexpr (std::is_same_v<In, T>) {
        visit(b.dtype, [&](auto tag) {  // (int32 operands were refused by local_dot)
          auto const* src = reinterpret_cast<decltype(tag) const*>(b.data);
          if (reorder) permute(exec, src, b.shape, b.strides, order, dst);
          else convert(exec, src, b.shape.num_elements(), dst);
        });
      } else {  // a 16-bit GEMM's operands are of its type: only their order may change
        permute(exec, reinterpret_cast<In const*>(b.data), b.shape, b.strides, order, dst);
      }
      temporaries.push_back(std::move(tmp));
      return dst;
    };
    In const* a = operand(lhs_block, lorder, lhs_strided.has_value());
    In const* b = operand(rhs_block, rorder, rhs_strided.has_value());
    // B read in place from its shard (GemmCall::b_buffer), outside a capture.
    std::weak_ptr<std::byte> b_buffer;
    if (reinterpret_cast<std::byte const*>(b) == rhs_block.data && capture_number() == 0)
      b_buffer = rhs.value.shards[pos].memory;
    for (std::int64_t i = 0; i < batch; ++i)
      gemms.push_back(GemmCall<In, Out>{lhs_strided ? a + lhs_strided->offset(i) : a + i * m * k,
                                        rhs_strided ? b + rhs_strided->offset(i) : b + i * k * n, c + i * m * n, m, n,
                                        k, la, lb, out.shards[pos].device, b_buffer});
    largest = std::max(largest, m * n * k);
  }
  run_gemms(std::span<GemmCall<In, Out> const>(gemms), largest);
  for (auto const& r : roundings)
    visit(out.dtype, [&](auto tag) {
      using S = decltype(tag);
      convert(device(r.device), r.from, r.n, reinterpret_cast<S*>(r.to));
    });
  // The temporaries go back to the pool with events after the GEMMs and roundings that read them.
}

// Two operands of 16-bit type H: the GEMM writes an H result itself (rounding its float sums as
// it stores them), any other result as float.
template <class H>
void half_dot(DotOperand const& lhs, DotOperand const& rhs, DotDims const& dims, TensorImpl& out) {
  if (out.dtype == dtype_of<H>) local_dot_typed<float, H, H>(lhs, rhs, dims, out);
  else local_dot_typed<float, H, float>(lhs, rhs, dims, out);
}

}  // namespace

void local_dot(DotOperand const& l, DotOperand const& r, DotDims const& dims, TensorImpl& out) {
  TensorImpl const &lhs = l.value, &rhs = r.value;
  // The GEMM runs in float64 for a float64 result, else in float32 (mixed operands are
  // converted to it).
  if (out.dtype == DType::int32 || lhs.dtype == DType::int32 || rhs.dtype == DType::int32)
    throw Error(std::format("dot_general: operands are {} and {}; int32 operands are not supported by the BLAS, "
                            "use astype<float>()",
                            name(lhs.dtype), name(rhs.dtype)));
  // Two operands of one 16-bit dtype go to the backend's 16-bit GEMM where it has one (float sums,
  // as the widened operands' float GEMM: only the order of the sums differs).
  if (out.dtype == DType::float64) local_dot_typed<double>(l, r, dims, out);
  else if (lhs.dtype == rhs.dtype && runs_16bit_gemms(lhs.dtype)) {
    if (lhs.dtype == DType::bfloat16) half_dot<bfloat16>(l, r, dims, out);
    else half_dot<float16>(l, r, dims, out);
  } else {
    local_dot_typed<float>(l, r, dims, out);
  }
}

void set_gemm_schedule(GemmSchedule s) { chosen_schedule.store(static_cast<int>(s), std::memory_order_relaxed); }

// A choice the program may set (a value >= 0 in `set`), else the environment's, read once.
template <class E, E (*from_environment)()>
E set_or_from_environment(std::atomic<int> const& set) {
  int const v = set.load(std::memory_order_relaxed);
  if (v >= 0) return static_cast<E>(v);
  static E const fallback = from_environment();
  return fallback;
}

GemmSchedule gemm_schedule() {
  return set_or_from_environment<GemmSchedule, schedule_from_environment>(chosen_schedule);
}

char const* schedule_name(GemmSchedule s) {
  switch (s) {
    case GemmSchedule::automatic: return "automatic";
    case GemmSchedule::devices_in_parallel: return "devices_in_parallel";
    case GemmSchedule::one_at_a_time: return "one_at_a_time";
  }
  return "?";
}

void set_f32_gemm(F32Gemm g) { chosen_f32_gemm.store(static_cast<int>(g), std::memory_order_relaxed); }

F32Gemm f32_gemm() { return set_or_from_environment<F32Gemm, f32_gemm_from_environment>(chosen_f32_gemm); }

char const* f32_gemm_name(F32Gemm g) {
  switch (g) {
    case F32Gemm::automatic: return "automatic";
    case F32Gemm::openblas: return "openblas";
    case F32Gemm::onednn: return "onednn";
  }
  return "?";
}

}  // namespace tessel::detail
