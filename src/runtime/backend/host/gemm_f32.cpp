// float32 GEMMs by oneDNN's matmul where it is at least as fast as OpenBLAS on this CPU
// (bench/bench_gemm_f32.cpp measures both, interleaved, per shape class).
//
// The automatic rule compares vector widths, read at run time: oneDNN picks the CPU's widest
// kernels itself, while OpenBLAS runs those of its core type (openblas_get_corename(), or
// OPENBLAS_CORETYPE), which can be narrower: Debian's OpenBLAS 0.3.29 under
// OPENBLAS_CORETYPE=Haswell on AVX-512 AMD Zen 5, where oneDNN's AVX-512 matmul is 1.6x to 2.8x
// faster on every shape class measured. Where they are wider, every float32 GEMM goes to oneDNN.
// At equal widths oneDNN reading B as it lies reaches 0.5 to 1.0 of OpenBLAS's speed on large
// GEMMs (2048 x 768 x 3072 on a 2-core Sapphire Rapids: 0.54), but given B packed in its kernels'
// layout it is level or faster on every shape class bench_gemm_f32 measures: at 512 bits every
// GEMM goes to oneDNN, with B packed where that pays: a weight's copy kept from its second GEMM on
// (packed_operands.hpp), and any other B of a GEMM of more than 256 rows packed for that call
// alone (pack_rows). Packing changes no bit, so a GEMM's bits do not depend on whether its B was
// packed. Neither library's bits are the same for a GEMM and its row or column blocks in general
// (OpenBLAS's edge kernels and SkylakeX's direct and small-matrix paths sum in another order;
// docs/design.md: a sharded GEMM's bits need not be the unsharded one's). oneDNN's 512-bit
// kernels do agree with themselves across such splits and its AVX2 ones do not (16 x 24 . 24 x 6
// against its 6 columns one by one differs in the last bit): at 256 bits every GEMM stays on
// OpenBLAS, whose bits for that case are the whole GEMM's.
// TESSEL_F32_GEMM=onednn / openblas forces one library.
//
// Threads: a primitive runs on oneDNN's OpenMP threads, the same as Kokkos's and OpenBLAS's; inside
// a parallel region (devices_in_parallel) on its caller alone. A GEMM of at most 64 rows runs as
// a block of columns per thread, each one-threaded (onednn_sgemm_by_columns), so that its bits do
// not depend on the thread count, as oneDNN's own split of a thin GEMM's sums does (1 x 4096 x 96;
// CTest's thread-count check runs such GEMMs). Larger ones promise no such thing: 512-bit kernels
// gave GEMMs of 65 to 512 rows, k up to 16384, n up to 1536 (up to 32003 at 65 to 256 rows) the
// same bits at 1, 2, 3, 8 and 16 threads in scratch checks, AVX2 kernels did not (256 x 64 x 256
// at 3). Each thread executes on its own stream with its own scratchpad (oneDNN's shared library
// scratchpad is not safe for concurrent execution of primitives).
#include "gemm_f32.hpp"

#include <cblas.h>

#include <algorithm>
#include <bit>
#include <cctype>

#include "tessel/runtime/local_dot.hpp"

#if defined(TESSEL_HAVE_ONEDNN)
#include <oneapi/dnnl/dnnl.hpp>

#include "packed_operands.hpp"

#include <cstddef>
#include <format>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <tuple>
#include <unordered_map>
#endif
#if defined(_OPENMP)
#include <omp.h>
#endif

namespace tessel::detail {
namespace {

// OpenBLAS's core types with 512-bit sgemm kernels; the others tessel meets (Haswell, Zen) run AVX2.
int openblas_vector_bits() {
  static int const bits = [] {
    std::string core = openblas_get_corename();
    std::transform(core.begin(), core.end(), core.begin(), [](unsigned char c) { return std::tolower(c); });
    return core == "skylakex" || core == "cooperlake" || core == "sapphirerapids" ? 512 : 256;
  }();
  return bits;
}

}  // namespace

#if defined(TESSEL_HAVE_ONEDNN)
namespace {

int onednn_vector_bits() {
  static int const bits = [] {
    auto const isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    auto has = [&](dnnl::cpu_isa unit) { return (isa & static_cast<unsigned>(unit)) == static_cast<unsigned>(unit); };
    return has(dnnl::cpu_isa::avx512_core) ? 512 : has(dnnl::cpu_isa::avx2) ? 256 : 128;
  }();
  return bits;
}

// Whether oneDNN runs on OpenMP's threads (as Debian's does), or on its caller alone: a TBB or
// thread-pool build would bring threads of its own beside Kokkos's.
bool onednn_shares_threads() {
  auto const runtime = dnnl_version()->cpu_runtime;
  return runtime == DNNL_RUNTIME_OMP || runtime == DNNL_RUNTIME_SEQ;
}

// One primitive per shape and layout, made on first use (0.1-1 ms: oneDNN generates its kernel);
// null where oneDNN has none. Shared pointers: a thread may still run one the cache let go.
// A packed one reads B in its own layout `b` (packed_operands.hpp), made from `b_plain`.
struct Primitive {
  dnnl::matmul matmul;
  dnnl::memory::desc a, b, c, scratchpad, b_plain;
};
using Key =
    std::tuple<std::int64_t, std::int64_t, std::int64_t, bool, std::int64_t, bool, std::int64_t, std::int64_t, bool>;
constexpr std::size_t max_primitives = 1024;

struct Cache {
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  std::mutex mutex;
  std::map<Key, std::shared_ptr<Primitive const>> primitives;
};

Cache& cache() {
  static Cache c;
  return c;
}

dnnl::memory::dims strides(MatrixLayout const& l) {
  return l.transposed ? dnnl::memory::dims{1, l.ld} : dnnl::memory::dims{l.ld, 1};
}

// ldc: the row stride of the result (g.n, or more for a block of columns).
std::shared_ptr<Primitive const> primitive(GemmCall<float> const& g, std::int64_t ldc, bool packed = false) {
  auto& c = cache();
  Key const key{g.m, g.n, g.k, g.la.transposed, g.la.ld, g.lb.transposed, g.lb.ld, ldc, packed};
  std::lock_guard lock(c.mutex);
  if (auto at = c.primitives.find(key); at != c.primitives.end()) return at->second;
  // A program of ever new shapes (a growing sequence, say) would keep every kernel: start over.
  if (c.primitives.size() >= max_primitives) c.primitives.clear();
  std::shared_ptr<Primitive const> made;
  try {
    constexpr auto f32 = dnnl::memory::data_type::f32;
    dnnl::memory::desc const a({g.m, g.k}, f32, strides(g.la)), b({g.k, g.n}, f32, strides(g.lb)),
        out({g.m, g.n}, f32, dnnl::memory::dims{ldc, 1});
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::matmul::primitive_desc const pd(
        c.engine, a, packed ? dnnl::memory::desc({g.k, g.n}, f32, dnnl::memory::format_tag::any) : b, out, attr);
    made = std::make_shared<Primitive const>(
        Primitive{dnnl::matmul(pd), a, pd.weights_desc(), out, pd.scratchpad_desc(), b});
  } catch (dnnl::error const&) {
    // No matmul for this layout: OpenBLAS runs it (remembered as null).
  }
  c.primitives.emplace(key, made);
  return made;
}

// The calling thread's stream and scratchpad (64-byte aligned, grown as needed).
struct ThreadState {
  dnnl::stream stream{cache().engine};
  std::unique_ptr<std::byte, void (*)(std::byte*)> scratch{nullptr, [](std::byte* p) {
                                                              ::operator delete(p, std::align_val_t{64});
                                                            }};
  std::size_t scratch_bytes = 0;
  void* scratchpad(std::size_t bytes) {
    if (bytes > scratch_bytes) {
      scratch.reset(static_cast<std::byte*>(::operator new(bytes, std::align_val_t{64})));
      scratch_bytes = bytes;
    }
    return scratch.get();
  }
};

ThreadState& thread_state() {
  thread_local ThreadState t;
  return t;
}

// The primitive to run g by and the B it reads: its packed copy where one is kept
// (packed_operands.hpp: made under the caller's OneThread, if any, as the primitive is), else
// `plain` on g.b. `kept` holds the copy while it is read.
struct WithOperand {
  std::shared_ptr<Primitive const> primitive;
  float const* b;
  std::shared_ptr<dnnl::memory const> kept;
};
WithOperand with_operand(GemmCall<float> const& g, std::int64_t ldc, std::shared_ptr<Primitive const> plain) {
  if (!g.b_buffer.expired())
    if (auto p = primitive(g, ldc, true))
      if (auto kept = packed_operand(g.b_buffer, g.b, p->b_plain, p->b, g.device, cache().engine, thread_state().stream))
        return {std::move(p), static_cast<float const*>(kept->get_data_handle()), kept};
  return {std::move(plain), g.b, nullptr};
}

}  // namespace

// Above this many rows a B that is not kept is packed for its GEMM alone: oneDNN reading a plain B
// fell to 0.54 to 0.96 of OpenBLAS's speed from 512 rows, while the packing pass is small beside
// such a GEMM. (Up to 256 rows oneDNN's bits did not depend on the thread count: 1 to 16 threads,
// n up to 32003, both layouts of b.)
constexpr std::int64_t pack_rows = 256;
// GEMMs of at most this many rows run as blocks of columns (onednn_sgemm_by_columns).
constexpr std::int64_t column_block_rows = 64;

bool f32_gemm_by_onednn() {
  switch (f32_gemm()) {
    case F32Gemm::openblas: return false;
    case F32Gemm::onednn: return true;
    case F32Gemm::automatic: break;
  }
  if (!onednn_shares_threads()) return false;
  int const bits = onednn_vector_bits();
  return bits > openblas_vector_bits() || bits == 512;
}

namespace {

// A GEMM this small (multiply-adds) runs on its caller's thread alone: forking oneDNN's OpenMP
// region costs more than the work (bench_dispatch's 16 x 16 GEMMs), as in OpenBLAS's small path.
constexpr std::int64_t one_thread_work = 32 * 32 * 32;

// While alive, oneDNN sees one thread: it sizes a primitive's work split by the threads it sees
// when the primitive is made and when it runs.
class OneThread {
 public:
#if defined(_OPENMP)
  explicit OneThread(bool on) : threads_(on ? omp_get_max_threads() : 0) {
    if (on) omp_set_num_threads(1);
  }
  ~OneThread() {
    if (threads_ > 0) omp_set_num_threads(threads_);
  }
#else
  explicit OneThread(bool) {}
#endif
  OneThread(OneThread const&) = delete;
  OneThread& operator=(OneThread const&) = delete;

 private:
  [[maybe_unused]] int threads_ = 0;
};

// Runs primitive p on the calling thread's stream: a of g, b's block from `b`, the result's block
// into `c`.
void execute(std::shared_ptr<Primitive const> const& p, float const* a, float const* b, float* c) {
  ThreadState& t = thread_state();
  // The calling thread's memory objects of the last primitive it ran, their data handles reset:
  // creating them costs an allocation each, which tiny GEMMs feel.
  thread_local Primitive const* last = nullptr;
  thread_local std::shared_ptr<Primitive const> keep;
  thread_local std::unordered_map<int, dnnl::memory> args;
  auto& engine = cache().engine;
  void* scratch = t.scratchpad(p->scratchpad.get_size());
  if (last != p.get()) {
    args = {{DNNL_ARG_SRC, dnnl::memory(p->a, engine, const_cast<float*>(a))},
            {DNNL_ARG_WEIGHTS, dnnl::memory(p->b, engine, const_cast<float*>(b))},
            {DNNL_ARG_DST, dnnl::memory(p->c, engine, c)},
            {DNNL_ARG_SCRATCHPAD, dnnl::memory(p->scratchpad, engine, scratch)}};
    last = p.get();
    keep = p;
  } else {
    args[DNNL_ARG_SRC].set_data_handle(const_cast<float*>(a));
    args[DNNL_ARG_WEIGHTS].set_data_handle(const_cast<float*>(b));
    args[DNNL_ARG_DST].set_data_handle(c);
    args[DNNL_ARG_SCRATCHPAD].set_data_handle(scratch);
  }
  p->matmul.execute(t.stream, args);
  t.stream.wait();
}

// A GEMM of few rows runs as blocks of columns, each on one thread: over several threads oneDNN
// would split its sums over k between them (a 1 x 4096 x 96 GEMM's bits differ at 1 and 8
// threads), and its bits would depend on the thread count. One block per thread: a one-thread
// matmul's column has the same bits in any block at least 16 columns wide (a scratch check over
// 1 to 64 rows, k 1 to 16384, n 5 to 4099, both layouts of b, widths 16 to 1000: all equal; widths
// 1 and 3 are not), so the blocks may follow the threads, and fewer, wider blocks read the weights
// faster than many narrow ones: 2 x 512 . 512 x 1536 at 2 threads, 16 blocks 70 GB/s, 2 blocks 99.
constexpr std::int64_t min_column_block = 64;

#if defined(_OPENMP)
std::int64_t column_block_threads(GemmCall<float> const& g) {
  if (omp_in_parallel() || g.m * g.n * g.k <= one_thread_work) return 1;
  return omp_get_max_threads();
}
#else
std::int64_t column_block_threads(GemmCall<float> const&) { return 1; }
#endif

bool onednn_sgemm_by_columns(GemmCall<float> const& g) {
  if (g.n <= 0) return false;  // (OpenBLAS's empty GEMM)
  std::int64_t const count = std::clamp<std::int64_t>(g.n / min_column_block, 1, column_block_threads(g));
  std::int64_t const width = (g.n + count - 1) / count;
  std::int64_t const blocks = (g.n + width - 1) / width;
  auto block = [&](std::int64_t j) {
    GemmCall<float> b = g;
    b.n = std::min(width, g.n - j);
    b.b = g.b + (g.lb.transposed ? j * g.lb.ld : j);
    b.c = g.c + j;
    return b;
  };
  std::shared_ptr<Primitive const> full, last;
  {
    OneThread one(true);
    full = primitive(block(0), g.n);
    last = primitive(block((blocks - 1) * width), g.n);
  }
  if (!full || !last) return false;
  auto run = [&](std::int64_t i) {
    GemmCall<float> const b = block(i * width);
    OneThread one(true);
    auto const use = with_operand(b, g.n, b.n == width ? full : last);
    execute(use.primitive, b.a, use.b, b.c);
  };
#if defined(_OPENMP)
  if (blocks > 1) {
#pragma omp parallel for schedule(static)
    for (std::int64_t i = 0; i < blocks; ++i) run(i);
    return true;
  }
#endif
  for (std::int64_t i = 0; i < blocks; ++i) run(i);
  return true;
}

}  // namespace

bool onednn_sgemm(GemmCall<float> const& g) {
  if (g.m <= column_block_rows) return onednn_sgemm_by_columns(g);
  auto p = primitive(g, g.n);
  if (!p) return false;
#if defined(_OPENMP)
  OneThread one(g.m * g.n * g.k <= one_thread_work && !omp_in_parallel());
#endif
  auto use = with_operand(g, g.n, std::move(p));
  if (!use.kept && g.m > pack_rows)
    if (auto packed = primitive(g, g.n, true)) {  // B packed for this GEMM alone
      // (in memory of its own, which goes with it: a thread's buffer would keep the largest B
      // it ever packed, a vocabulary's table say; execute runs after it on the same stream)
      auto copy = packed_copy(g.b, packed->b_plain, packed->b, cache().engine, thread_state().stream);
      use = {std::move(packed), static_cast<float const*>(copy->get_data_handle()), copy};
    }
  execute(use.primitive, g.a, use.b, g.c);
  return true;
}

std::string f32_gemm_info() {
  dnnl_version_t const* v = dnnl_version();
  auto const onednn = std::format("oneDNN {}.{}.{} matmul ({}-bit)", v->major, v->minor, v->patch, onednn_vector_bits());
  auto const openblas = std::format("OpenBLAS sgemm ({}-bit)", openblas_vector_bits());
  switch (f32_gemm()) {
    case F32Gemm::openblas: return openblas + " (TESSEL_F32_GEMM=openblas)";
    case F32Gemm::onednn: return onednn + " (TESSEL_F32_GEMM=onednn)";
    case F32Gemm::automatic: break;
  }
  if (!onednn_shares_threads()) return openblas + " (oneDNN's threads are not OpenMP's)";
  if (onednn_vector_bits() > openblas_vector_bits()) return onednn + ": wider vectors than " + openblas;
  if (onednn_vector_bits() == 512)
    return std::format("{} with B packed (weights kept, others beyond {} rows): as wide as {}", onednn, pack_rows,
                       openblas);
  return openblas + ": vectors as wide as " + onednn + "'s";
}

int f32_gemm_vector_bits() {
  return f32_gemm_by_onednn() ? onednn_vector_bits() : openblas_vector_bits();
}

#else

bool f32_gemm_by_onednn() { return false; }
bool onednn_sgemm(GemmCall<float> const&) { return false; }
std::string f32_gemm_info() { return "OpenBLAS sgemm (oneDNN not found)"; }
int f32_gemm_vector_bits() { return openblas_vector_bits(); }

#endif

}  // namespace tessel::detail
