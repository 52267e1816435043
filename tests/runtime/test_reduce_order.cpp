// Reductions with few outputs combine their rows in an order the shape alone fixes
// (core/buffer_bytes.hpp: reduce_runs), never the thread count; so do oneDNN's float32 GEMMs of few
// rows (backend/host/gemm_f32.cpp: its column blocks). The hidden cases write their results' bits
// to $TESSEL_REDUCE_BITS; check_thread_counts.cmake runs them with 1, 2 and 3 OpenMP threads and
// compares the files.
#include <catch2/catch_test_macros.hpp>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include "support/digest.hpp"
#include "tessel/runtime/local_dot.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using test::bits_digest;

TEST_CASE("reductions with few outputs write their bits for the thread-count check", "[.reduce_order]") {
  char const* path = std::getenv("TESSEL_REDUCE_BITS");
  REQUIRE(path != nullptr);
  std::ofstream out(path);
  auto one = make_mesh({1}, {"x"}, {0});
  auto grid = make_mesh({2, 4}, {"a", "b"});
  // 4096 rows of 40: one output (a full reduction) or 40 (down the rows), each over thousands of
  // rows, which threads would otherwise split among themselves.
  Shape shape{4096, 40};
  for (auto const& s : {NamedSharding(one, P()), NamedSharding(grid, P("a", None)), NamedSharding(grid, P(None, "b"))}) {
    auto x = random::normal(PRNGKey(3), shape, s);
    auto xd = random::normal<double>(PRNGKey(4), shape, s);
    std::string at = to_string(s.spec()) + " ";
    out << at << "sum " << bits_digest(eval(sum(x)).to_host()) << "\n";
    out << at << "sum0 " << bits_digest(eval(sum(x, 0)).to_host()) << "\n";
    out << at << "mean0 " << bits_digest(eval(mean(x, 0)).to_host()) << "\n";
    out << at << "max0 " << bits_digest(eval(max(x * x, 0)).to_host()) << "\n";
    out << at << "var0 " << bits_digest(eval(var(x, 0)).to_host()) << "\n";
    out << at << "sum_f64 " << bits_digest(eval(sum(xd)).to_host()) << "\n";
  }
  CHECK(out.good());
}

TEST_CASE("float32 GEMMs of few rows write their bits for the thread-count check", "[.reduce_order]") {
  char const* path = std::getenv("TESSEL_REDUCE_BITS");
  REQUIRE(path != nullptr);
  std::ofstream out(path, std::ios::app);  // (after the reductions' case)
  using detail::F32Gemm;
  F32Gemm const before = detail::f32_gemm();
  detail::set_f32_gemm(F32Gemm::onednn);
  // What gemm_f32.cpp promises: oneDNN's GEMMs of at most 64 rows run as column blocks fixed by the
  // shape, one thread each (on its own threads oneDNN split 1 x 4096 x 96's sums over k: other bits at
  // 3 threads than at 1). Larger GEMMs promise nothing: OpenBLAS's Haswell kernels give 64 x 768 x 300
  // other bits at 2 threads than at 1 (they partition the result among threads), and oneDNN's AVX2
  // kernels 256 x 64 x 256 at 3.
  if (detail::blas_info().f32_gemms.find("oneDNN not found") == std::string::npos) {
    auto one = make_mesh({1}, {"x"}, {0});
    struct Gemm {
      std::int64_t m, k, n;
    };
    for (Gemm g : {Gemm{1, 4096, 96}, Gemm{2, 512, 1000}, Gemm{8, 3072, 768}, Gemm{64, 768, 300}}) {
      auto x = random::normal(PRNGKey(5), {g.m, g.k}, NamedSharding(one, P()));
      auto w = random::normal(PRNGKey(6), {g.k, g.n}, NamedSharding(one, P()));
      out << g.m << "x" << g.k << "x" << g.n << " " << bits_digest(eval(matmul(x, w)).to_host()) << "\n";
    }
  }
  detail::set_f32_gemm(before);
  CHECK(out.good());
}
