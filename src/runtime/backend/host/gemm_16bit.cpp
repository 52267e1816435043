// 16-bit GEMMs on host backends, by oneDNN's matmul (where the build found oneDNN): bfloat16 or
// float16 operands read as they are, products summed in float, stored as float or rounded once to
// the operands' type as they are stored (oneDNN rounds to nearest even, as JAX). oneDNN picks
// the CPU's widest path at run time (AMX tiles, AVX512-BF16 or AVX512-FP16, else its own
// conversion to float); Debian's OpenBLAS is built without its bfloat16 GEMM. Without oneDNN,
// runs_16bit_gemms() is false and local_dot widens the operands for OpenBLAS's sgemm instead.
#include "tessel/runtime/backend/gemm_batch.hpp"

#include "tessel/core/error.hpp"
#include "tessel/runtime/local_dot.hpp"
#include "enqueue_gemms.hpp"

#if defined(TESSEL_HAVE_ONEDNN)
#include <oneapi/dnnl/dnnl.hpp>

#include <format>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>

#include "packed_operands.hpp"
#endif

namespace tessel::detail {

#if defined(TESSEL_HAVE_ONEDNN)
namespace {

// One matmul primitive per shape, layout and batch stride, made on first use: making one costs
// 0.1-1 ms (oneDNN generates its kernel), far more than a small GEMM.
using Key = std::tuple<bool, bool, std::int64_t, std::int64_t, std::int64_t, std::int64_t, bool, std::int64_t, bool,
                       std::int64_t, std::int64_t, std::int64_t, std::int64_t, bool>;

// A matmul and the layout it reads B in: the plain one, or its own packed layout
// (packed_operands.hpp) for a primitive made with format_tag::any.
struct Matmul {
  dnnl::matmul matmul;
  dnnl::memory::desc b;
};

constexpr std::size_t max_primitives = 1024;

struct Engine {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  std::mutex mutex;
  std::map<Key, Matmul> primitives;
};

Engine& onednn() {
  static Engine e;
  return e;
}

// Strides of a row-major operand of `rows` x `cols` read through `l` (transposed: stored cols x
// rows), as (rows, cols) strides, behind a batch stride when there is a batch.
dnnl::memory::dims strides(MatrixLayout const& l, std::int64_t batch_stride, bool batched) {
  dnnl::memory::dims s = l.transposed ? dnnl::memory::dims{1, l.ld} : dnnl::memory::dims{l.ld, 1};
  if (batched) s.insert(s.begin(), batch_stride);
  return s;
}

template <class T>
constexpr auto data_type = std::is_same_v<T, float>      ? dnnl::memory::data_type::f32
                           : std::is_same_v<T, bfloat16> ? dnnl::memory::data_type::bf16
                                                         : dnnl::memory::data_type::f16;

template <class T, class C>
void run(std::span<GemmCall<T, C> const> calls) {
  constexpr auto type = data_type<T>;
  auto& e = onednn();
  std::lock_guard lock(e.mutex);
  for_each_strided_run(calls, [&](std::size_t first, std::size_t count) {
    GemmCall<T, C> const& g = calls[first];
    bool const batched = count > 1;
    std::int64_t sa = 0, sb = 0, sc = 0;
    if (batched) sa = calls[first + 1].a - g.a, sb = calls[first + 1].b - g.b, sc = calls[first + 1].c - g.c;
    auto const batch = static_cast<std::int64_t>(count);
    auto dims = [&](std::int64_t r, std::int64_t c) {
      return batched ? dnnl::memory::dims{batch, r, c} : dnnl::memory::dims{r, c};
    };
    dnnl::memory::desc const a_md(dims(g.m, g.k), type, strides(g.la, sa, batched));
    dnnl::memory::desc const b_md(dims(g.k, g.n), type, strides(g.lb, sb, batched));
    dnnl::memory::desc const c_md(dims(g.m, g.n), data_type<C>,
                                  strides(MatrixLayout{false, g.n}, sc, batched));
    // A B read in place from a tensor (a weight) is packed once and kept (packed_operands.hpp).
    bool const pack = !batched && !g.b_buffer.expired();
    auto matmul = [&](bool packed) -> Matmul const& {
      Key const key{std::is_same_v<T, bfloat16>, std::is_same_v<C, float>, batch, g.m, g.n, g.k, g.la.transposed,
                    g.la.ld, g.lb.transposed, g.lb.ld, sa, sb, sc, packed};
      auto at = e.primitives.find(key);
      if (at != e.primitives.end()) return at->second;
      // A program of ever new shapes (a growing sequence, say) would keep every kernel: start over.
      if (e.primitives.size() >= max_primitives) e.primitives.clear();
      try {
        dnnl::memory::desc const b_want = packed ? dnnl::memory::desc(dims(g.k, g.n), type, dnnl::memory::format_tag::any) : b_md;
        dnnl::matmul::primitive_desc const pd(e.engine, a_md, b_want, c_md);
        return e.primitives.emplace(key, Matmul{dnnl::matmul(pd), pd.weights_desc()}).first->second;
      } catch (dnnl::error const& err) {
        throw Error(std::format("dot_general: oneDNN has no {} matmul for {} x {} x {} (batch {}) on device {}: {}",
                                std::is_same_v<T, bfloat16> ? "bfloat16" : "float16", g.m, g.k, g.n, batch, g.device,
                                err.what()));
      }
    };
    std::shared_ptr<dnnl::memory const> packed;
    if (pack) {
      Matmul const& p = matmul(true);
      packed = packed_operand(g.b_buffer, g.b, b_md, p.b, g.device, e.engine, e.stream);
    }
    Matmul const& p = matmul(packed != nullptr);
    dnnl::memory a(a_md, e.engine, const_cast<T*>(g.a)), c(c_md, e.engine, g.c);
    dnnl::memory b = packed ? *packed : dnnl::memory(b_md, e.engine, const_cast<T*>(g.b));
    p.matmul.execute(e.stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
  });
  e.stream.wait();
}

// The CPU's unit for products of `operands` (oneDNN's ISA values include those of the ISAs they
// extend), or null: without one oneDNN would widen the operands itself, no faster than OpenBLAS's
// sgemm on widened operands (and some builds have no such matmul at all).
char const* unit_for(DType operands) noexcept {
  static auto const isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
  auto has = [](dnnl::cpu_isa unit) { return (isa & static_cast<unsigned>(unit)) == static_cast<unsigned>(unit); };
  if (operands == DType::bfloat16) {
    if (has(dnnl::cpu_isa::avx512_core_amx)) return "AMX";
    if (has(dnnl::cpu_isa::avx512_core_bf16)) return "AVX512-BF16";
  } else if (operands == DType::float16) {
    if (has(dnnl::cpu_isa::avx512_core_fp16)) return "AVX512-FP16";
  } else {
    return nullptr;
  }
  return has(dnnl::cpu_isa::avx2_vnni_2) ? "AVX2-VNNI-2" : nullptr;
}

}  // namespace

bool runs_16bit_gemms(DType operands) noexcept { return unit_for(operands) != nullptr; }
void run_gemms(std::span<GemmCall<bfloat16, float> const> calls, std::int64_t) {
  enqueue_gemms(calls, [](std::span<GemmCall<bfloat16, float> const> c) { run(c); });
}
void run_gemms(std::span<GemmCall<float16, float> const> calls, std::int64_t) {
  enqueue_gemms(calls, [](std::span<GemmCall<float16, float> const> c) { run(c); });
}
void run_gemms(std::span<GemmCall<bfloat16> const> calls, std::int64_t) {
  enqueue_gemms(calls, [](std::span<GemmCall<bfloat16> const> c) { run(c); });
}
void run_gemms(std::span<GemmCall<float16> const> calls, std::int64_t) {
  enqueue_gemms(calls, [](std::span<GemmCall<float16> const> c) { run(c); });
}

std::string half_gemm_info() {
  dnnl_version_t const* v = dnnl_version();
  auto one = [&](DType d) {
    char const* unit = unit_for(d);
    return unit ? std::format("{}: oneDNN {}.{}.{} matmul ({})", name(d), v->major, v->minor, v->patch, unit)
                : std::format("{}: widened to float (oneDNN {}.{}.{} found, no {} unit on this CPU)", name(d), v->major,
                              v->minor, v->patch, name(d));
  };
  return one(DType::bfloat16) + "; " + one(DType::float16);
}

#else

namespace {
[[noreturn]] void no_16bit_gemm() {
  throw Error("dot_general: this build has no 16-bit GEMM (oneDNN was not found); its operands are widened to float");
}
}  // namespace

bool runs_16bit_gemms(DType) noexcept { return false; }
void run_gemms(std::span<GemmCall<bfloat16, float> const>, std::int64_t) { no_16bit_gemm(); }
void run_gemms(std::span<GemmCall<float16, float> const>, std::int64_t) { no_16bit_gemm(); }
void run_gemms(std::span<GemmCall<bfloat16> const>, std::int64_t) { no_16bit_gemm(); }
void run_gemms(std::span<GemmCall<float16> const>, std::int64_t) { no_16bit_gemm(); }
std::string half_gemm_info() { return "bfloat16, float16: widened to float (oneDNN not found)"; }
// (no oneDNN: no operand is kept packed, packed_operands.cpp is not built)
std::size_t kept_operand_bytes() { return 0; }
std::size_t kept_operand_bytes(int) { return 0; }
void limit_kept_operands_for_test(std::size_t) {}

#endif

}  // namespace tessel::detail
