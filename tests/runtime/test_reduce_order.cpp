// Reductions with few outputs combine their rows in an order the shape alone fixes
// (core/buffer_bytes.hpp: reduce_runs), never the thread count; so do float32 GEMMs of few rows
// (backend/host/gemm_f32.cpp: oneDNN's column blocks). The hidden cases write their results' bits
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

TEST_CASE("float32 GEMMs write their bits for the thread-count check", "[.reduce_order]") {
  char const* path = std::getenv("TESSEL_REDUCE_BITS");
  REQUIRE(path != nullptr);
  std::ofstream out(path, std::ios::app);  // (after the reductions' case)
  using detail::F32Gemm;
  F32Gemm const before = detail::f32_gemm();
  auto one = make_mesh({1}, {"x"}, {0});
  // Thin GEMMs, which oneDNN on its own splits over k between threads (1 x 4096 x 96 had other bits
  // at 3 threads than at 1), and small ones that it runs on its own threads.
  struct Gemm {
    std::int64_t m, k, n;
  };
  for (Gemm g : {Gemm{1, 4096, 96}, Gemm{2, 512, 1000}, Gemm{64, 768, 300}, Gemm{65, 256, 128}, Gemm{256, 64, 256},
                 Gemm{256, 1536, 512}})
    for (F32Gemm library : {F32Gemm::automatic, F32Gemm::onednn, F32Gemm::openblas}) {
      detail::set_f32_gemm(library);
      auto x = random::normal(PRNGKey(5), {g.m, g.k}, NamedSharding(one, P()));
      auto w = random::normal(PRNGKey(6), {g.k, g.n}, NamedSharding(one, P()));
      out << g.m << "x" << g.k << "x" << g.n << " " << detail::f32_gemm_name(library) << " "
          << bits_digest(eval(matmul(x, w)).to_host()) << "\n";
    }
  detail::set_f32_gemm(before);
  CHECK(out.good());
}
