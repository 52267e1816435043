#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>

#include "support/close.hpp"
#include "support/data.hpp"
#include "support/meshes.hpp"
#include "tessel/runtime/local_dot.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace tessel;
using test::require_close;
using test::whole;

namespace {

Tensor<float> draw(Shape const& shape, NamedSharding const& s, int k) {
  return random::normal(random::fold_in(PRNGKey(99), static_cast<std::uint32_t>(k)), shape, s);
}
std::vector<float> host_matmul(std::vector<float> const& a, std::vector<float> const& b, int m, int k, int n) {
  std::vector<float> c(static_cast<std::size_t>(m * n), 0.0f);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int p = 0; p < k; ++p) acc += double(a[static_cast<std::size_t>(i * k + p)]) * b[static_cast<std::size_t>(p * n + j)];
      c[static_cast<std::size_t>(i * n + j)] = static_cast<float>(acc);
    }
  return c;
}

}  // namespace

TEST_CASE("matmul for every pair of shardings of two 2-D operands on a 2x4 mesh", "[expr][dot][property]") {
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  auto specs = test::all_specs(mesh.axes(), 2);
  int m = 16, k = 24, n = 32;
  auto x0 = draw({m, k}, replicated(mesh), 0), w0 = draw({k, n}, replicated(mesh), 1);
  auto want = host_matmul(x0.to_host(), w0.to_host(), m, k, n);
  for (auto const& sx : specs)
    for (auto const& sw : specs) {
      auto x = device_put(x0, NamedSharding(mesh, sx));
      auto w = device_put(w0, NamedSharding(mesh, sw));
      INFO(to_string(sx) << " @ " << to_string(sw) << "\n" << explain(x.matmul(w)));
      Tensor<float> y = x.matmul(w);
      require_close(y.to_host(), want);
    }
}

TEST_CASE("batched dot_general over 3-D operands matches one device", "[expr][dot][property]") {
  for (auto const& mesh : {make_mesh({2, 2, 2}, {"a", "b", "c"}), make_mesh({4, 2}, {"a", "b"}), make_mesh({8}, {"a"})}) {
    auto specs = test::all_specs(mesh.axes(), 3);
    for (std::size_t i = 0; i < specs.size(); i += 3) {
      auto x = draw({8, 16, 24}, NamedSharding(mesh, specs[i]), 2);
      auto w = draw({8, 24, 16}, NamedSharding(mesh, specs[(i * 7 + 1) % specs.size()]), 3);
      INFO(to_string(mesh) << " " << to_string(x.sharding().spec()) << " @ " << to_string(w.sharding().spec()));
      require_close(eval(matmul(x, w)).to_host(), eval(matmul(whole(x), whole(w))).to_host());
      // Contract x's dimension 1 with w's dimension 2 and batch over 0: transposed operands.
      DotDims dims{{1}, {2}, {0}, {0}};
      auto y = draw({8, 24, 16}, NamedSharding(mesh, specs[(i * 5 + 2) % specs.size()]), 4);
      require_close(eval(dot_general(x, y, dims)).to_host(), eval(dot_general(whole(x), whole(y), dims)).to_host());
    }
  }
}

TEST_CASE("float32 GEMMs agree whichever library runs them, on either schedule", "[expr][dot][blas]") {
  using detail::F32Gemm;
  using detail::GemmSchedule;
  struct Restore {
    F32Gemm library = detail::f32_gemm();
    GemmSchedule schedule = detail::gemm_schedule();
    ~Restore() {
      detail::set_f32_gemm(library);
      detail::set_gemm_schedule(schedule);
    }
  } restore;
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  int const k = 72, n = 96;
  // Few rows and more, sharded and not; B as it is and transposed (stored n x k, as the logits read
  // the embedding table).
  for (int m : {4, 200, 300}) {
    auto x0 = draw({m, k}, replicated(mesh), 30 + m), w0 = draw({k, n}, replicated(mesh), 31 + m);
    auto wt0 = eval(transpose(w0));
    auto want = host_matmul(x0.to_host(), w0.to_host(), m, k, n);
    for (auto library : {F32Gemm::openblas, F32Gemm::onednn, F32Gemm::automatic})
      for (auto schedule : {GemmSchedule::devices_in_parallel, GemmSchedule::one_at_a_time}) {
        detail::set_f32_gemm(library);
        detail::set_gemm_schedule(schedule);
        INFO("m " << m << ", " << detail::f32_gemm_name(library) << ", " << detail::schedule_name(schedule));
        auto x = device_put(x0, NamedSharding(mesh, P("dp", None)));
        require_close(Tensor<float>(x.matmul(device_put(w0, NamedSharding(mesh, P(None, "mp"))))).to_host(), want);
        require_close(Tensor<float>(whole(x).matmul(whole(w0))).to_host(), want);
        DotDims const bt{{1}, {1}, {}, {}};
        require_close(Tensor<float>(dot_general(x, device_put(wt0, NamedSharding(mesh, P("mp", None))), bt)).to_host(),
                      want);
        require_close(Tensor<float>(dot_general(whole(x), whole(wt0), bt)).to_host(), want);
      }
  }
}

TEST_CASE("GSPMD's canonical dot cases get the expected collectives", "[expr][dot][plan]") {
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  auto s = [&](PartitionSpec p) { return NamedSharding(mesh, p); };
  SECTION("no contracting dimension sharded: no communication") {
    auto const& p = plan_of(matmul(draw({64, 32}, s(P("a", None)), 5), draw({32, 16}, s(P(None, "b")), 6)));
    CHECK(p.count(plan::Collective::all_reduce) == 0);
    CHECK(p.count(plan::StepKind::reshard) == 0);
    CHECK(p.count(plan::StepKind::kernel) == 1);
  }
  SECTION("one operand's contracting dimension sharded: the other is sliced locally, one all-reduce") {
    auto x = draw({64, 1024}, s(P(None, "b")), 7);
    auto w = draw({1024, 8}, s(P()), 8);
    auto const& p = plan_of(matmul(x, w));
    INFO(explain(matmul(x, w)));
    CHECK(p.count(plan::Collective::all_reduce) == 1);
    CHECK(p.count(plan::StepKind::reshard) == 1);
    CHECK_THAT(explain(matmul(x, w)), ContainsSubstring("(local slice over ('b')): 0 bytes"));
    require_close(eval(matmul(x, w)).to_host(), eval(matmul(whole(x), whole(w))).to_host());
  }
  SECTION("both contracting dimensions sharded alike: one all-reduce, nothing gathered") {
    // (Big enough that bytes, not latency, decide: gathering x would move 12 MB.)
    auto x = draw({256, 4096}, s(P("a", "b")), 9);
    auto w = draw({4096, 64}, s(P("b", None)), 10);
    auto const& p = plan_of(matmul(x, w));
    CHECK(p.count(plan::Collective::all_reduce) == 1);
    CHECK(p.count(plan::StepKind::reshard) == 0);
    CHECK_THAT(explain(matmul(x, w)), ContainsSubstring("all-reduce sum over mesh axes ('b') (groups of 4)"));
  }
  SECTION("a conflict on a free dimension: one operand is gathered") {
    auto x = draw({64, 32}, s(P("b", None)), 11);
    auto w = draw({32, 16}, s(P(None, "b")), 12);
    auto const& p = plan_of(matmul(x, w));
    INFO(explain(matmul(x, w)));
    CHECK(p.count(plan::Collective::all_reduce) == 0);
    CHECK(p.count(plan::Collective::all_gather) == 1);
    CHECK_THAT(explain(matmul(x, w)), ContainsSubstring("all-gather over ('b')"));
    require_close(eval(matmul(x, w)).to_host(), eval(matmul(whole(x), whole(w))).to_host());
  }
}

TEST_CASE("the Megatron MLP block: one all-reduce over mp, no weight gathered", "[expr][dot][plan]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  auto x = draw({64, 32}, NamedSharding(mesh, P("dp", None)), 13);
  auto w1 = draw({32, 128}, NamedSharding(mesh, P(None, "mp")), 14);
  auto w2 = draw({128, 32}, NamedSharding(mesh, P("mp", None)), 15);
  auto mlp = jit([](auto const& x, auto const& w1, auto const& w2) { return matmul(relu(x.matmul(w1)), w2); });
  auto const& p = mlp.plan(x, w1, w2);
  INFO(mlp.explain(x, w1, w2));
  CHECK(p.count(plan::Collective::all_reduce) == 1);
  CHECK(p.count(plan::StepKind::reshard) == 0);
  CHECK_THAT(mlp.explain(x, w1, w2), ContainsSubstring("all-reduce sum over mesh axes ('mp')"));
  auto y = mlp(x, w1, w2);
  CHECK(y.sharding() == NamedSharding(mesh, P("dp")));
  require_close(y.to_host(), eval(matmul(relu(matmul(whole(x), whole(w1))), whole(w2))).to_host());

  auto scattered = jit([](auto const& x, auto const& w1, auto const& w2) { return matmul(relu(x.matmul(w1)), w2); },
                       {}, NamedSharding(mesh, P("dp", "mp")));
  auto const& q = scattered.plan(x, w1, w2);
  CHECK(q.count(plan::Collective::reduce_scatter) == 1);
  CHECK(q.count(plan::Collective::all_reduce) == 0);
  CHECK(q.count(plan::StepKind::reshard) == 0);
  require_close(scattered(x, w1, w2).to_host(), y.to_host());
}

TEST_CASE("a jitted function plans once and then only runs", "[expr][jit]") {
  auto mesh = make_mesh({8}, {"x"});
  auto x = draw({64, 16}, NamedSharding(mesh, P("x")), 16);
  auto f = jit([](auto const& v) { return tanh(v) * 2.0f + 1.0f; });
  auto first = f(x);
  auto plans = plan::cached_plans();
  auto before = execution_counts();
  auto second = f(x);
  CHECK(plan::cached_plans() == plans);  // a cache hit: no new plan
  CHECK(execution_counts().kernels == before.kernels + 1);
  CHECK(test::bitwise_equal(first.to_host(), second.to_host()));
  auto other = draw({64, 16}, NamedSharding(mesh, P(None, "x")), 17);
  (void)f(other);  // another sharding: another plan
  CHECK(plan::cached_plans() == plans + 1);
}

TEST_CASE("jit's in_shardings and out_shardings are applied", "[expr][jit]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  auto x = draw({32, 8}, replicated(mesh), 18);
  auto w = draw({8, 16}, replicated(mesh), 19);
  NamedSharding xs(mesh, P("dp", None)), ws(mesh, P(None, "mp")), ys(mesh, P("dp", "mp"));
  auto forward = jit([](auto const& x, auto const& w) { return x.matmul(w); }, {xs, ws}, ys);
  auto y = forward(x, w);
  CHECK(y.sharding() == ys);
  CHECK(forward.plan(x, w).count(plan::StepKind::reshard) == 0);
  require_close(y.to_host(), host_matmul(x.to_host(), w.to_host(), 32, 8, 16));
}

TEST_CASE("bad dots fail naming dimensions and sizes", "[expr][dot][error]") {
  auto mesh = make_mesh({8}, {"x"});
  auto a = draw({16, 24}, NamedSharding(mesh, P("x")), 20);
  auto b = draw({25, 8}, NamedSharding(mesh, P()), 21);
  CHECK_THROWS_WITH(a.matmul(b), ContainsSubstring("dot_general: contracting dimension 1 of lhs (16, 24) has size 24 "
                                                   "but contracting dimension 0 of rhs (25, 8) has size 25"));
  CHECK_THROWS_WITH(dot_general(a, b, DotDims{{3}, {0}, {}, {}}),
                    ContainsSubstring("dot_general: lhs contracting dimension 3 is out of range for shape (16, 24)"));
  auto c = draw({24, 6}, NamedSharding(mesh, P()), 22);
  // Not an error: 6 columns over 8 devices are blocks of one (the last two devices hold none).
  auto uneven = eval(a.matmul(c), NamedSharding(mesh, P(None, "x")));
  auto whole = [](Tensor<float> const& t) { return device_put(t.to_host(), t.shape()); };
  CHECK(test::bitwise_equal(uneven.to_host(), Tensor<float>(whole(a).matmul(whole(c))).to_host()));
}

TEST_CASE("dot_mapping classifies each operand dimension once, at compile time too", "[expr][dot]") {
  DotDims d;
  d.lhs_batch.push_back(0);
  d.rhs_batch.push_back(0);
  d.lhs_contract.push_back(2);
  d.rhs_contract.push_back(1);
  constexpr auto check = [] {
    DotDims c;
    c.lhs_contract.push_back(1);
    c.rhs_contract.push_back(0);
    auto m = dot_mapping(c, 2, 2);
    return m.lhs_free.size() == 1 && m.lhs_free[0] == 0 && m.rhs_free.size() == 1 && m.rhs_free[0] == 1;
  }();
  STATIC_REQUIRE(check);
  auto m = dot_mapping(d, 4, 3);  // lhs (b, m1, k, m2), rhs (b, k, n)
  CHECK(m.lhs_free == FixedVector<std::uint8_t, max_rank>{1, 3});
  CHECK(m.rhs_free == FixedVector<std::uint8_t, max_rank>{2});
}

namespace {
// dot_general on the host, in double: result dimensions are the batch ones, lhs's free ones, then
// rhs's free ones (lax.dot_general's order).
std::vector<float> host_dot_general(std::vector<float> const& a, Shape const& as, std::vector<float> const& b,
                                    Shape const& bs, DotDims const& d, Shape const& out_shape) {
  auto free_dims = [](Shape const& s, auto const& batch, auto const& contract) {
    std::vector<std::size_t> f;
    for (std::size_t i = 0; i < s.size(); ++i)
      if (std::find(batch.begin(), batch.end(), i) == batch.end() &&
          std::find(contract.begin(), contract.end(), i) == contract.end())
        f.push_back(i);
    return f;
  };
  auto af = free_dims(as, d.lhs_batch, d.lhs_contract), bf = free_dims(bs, d.rhs_batch, d.rhs_contract);
  auto offset = [](Shape const& s, std::vector<std::int64_t> const& idx) {
    std::int64_t o = 0;
    for (std::size_t i = 0; i < s.size(); ++i) o = o * s[i] + idx[i];
    return static_cast<std::size_t>(o);
  };
  std::int64_t contract = 1;
  for (auto c : d.lhs_contract) contract *= as[c];
  std::vector<float> out(static_cast<std::size_t>(out_shape.num_elements()));
  std::vector<std::int64_t> o(out_shape.size(), 0);
  for (std::size_t flat = 0; flat < out.size(); ++flat) {
    std::int64_t rest = static_cast<std::int64_t>(flat);
    for (std::size_t i = out_shape.size(); i-- > 0;) {
      o[i] = rest % out_shape[i];
      rest /= out_shape[i];
    }
    std::vector<std::int64_t> ai(as.size()), bi(bs.size());
    std::size_t k = 0;
    for (std::size_t j = 0; j < d.lhs_batch.size(); ++j, ++k) ai[d.lhs_batch[j]] = bi[d.rhs_batch[j]] = o[k];
    for (auto f : af) ai[f] = o[k++];
    for (auto f : bf) bi[f] = o[k++];
    double acc = 0;
    for (std::int64_t c = 0; c < contract; ++c) {
      std::int64_t r = c;
      for (std::size_t j = d.lhs_contract.size(); j-- > 0;) {
        ai[d.lhs_contract[j]] = bi[d.rhs_contract[j]] = r % as[d.lhs_contract[j]];
        r /= as[d.lhs_contract[j]];
      }
      acc += double(a[offset(as, ai)]) * b[offset(bs, bi)];
    }
    out[flat] = static_cast<float>(acc);
  }
  return out;
}
}  // namespace

// Each device's GEMM reads its blocks in place when they are strided matrices (batch dimensions
// between the others, as attention's q . k^T and p . v have them; a contraction over the last
// dimension of both), and copies them into GEMM order otherwise: every layout against the host.
TEST_CASE("dot_general against a host loop for every operand layout, sharded and not", "[expr][dot]") {
  struct Case {
    Shape a, b;
    DotDims d;
  };
  std::vector<Case> cases{
      {{2, 6, 3, 4}, {2, 5, 3, 4}, {{3}, {3}, {0, 2}, {0, 2}}},  // q . k^T: (b, s, h, d) x (b, t, h, d)
      {{2, 3, 6, 5}, {2, 5, 3, 4}, {{3}, {1}, {0, 1}, {0, 2}}},  // p . v: (b, h, s, t) x (b, t, h, d)
      {{2, 6, 3, 4}, {3, 4, 8}, {{2, 3}, {0, 1}, {}, {}}},       // output projection
      {{6, 8}, {5, 8}, {{1}, {1}, {}, {}}},                      // x . w^T
      {{8, 6}, {8, 5}, {{0}, {0}, {}, {}}},                      // x^T . w
      {{8, 6}, {5, 8}, {{0}, {1}, {}, {}}},                      // x^T . w^T
      {{4, 3, 2, 6}, {3, 6, 4, 5}, {{3}, {1}, {1, 0}, {0, 2}}},  // batch dimensions in another order
      {{3, 4, 6}, {6, 4, 5}, {{2}, {0}, {1}, {1}}},               // batch in the middle of both
      {{3, 1, 6}, {6, 1, 5}, {{2}, {0}, {1}, {1}}},               // size-1 dimensions
      {{4, 6, 2}, {6, 2, 5}, {{1, 2}, {0, 1}, {}, {}}},           // two contracting dimensions
      {{6, 4, 2}, {2, 6, 5}, {{0, 2}, {1, 0}, {}, {}}},           // ... not in memory order
  };
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  for (std::size_t c = 0; c < cases.size(); ++c) {
    auto const& [as, bs, d] = cases[c];
    auto x = draw(as, replicated(mesh), 10 + static_cast<int>(c));
    auto y = draw(bs, replicated(mesh), 40 + static_cast<int>(c));
    Tensor<float> one = dot_general(whole(x), whole(y), d);
    auto want = host_dot_general(x.to_host(), as, y.to_host(), bs, d, one.shape());
    INFO("case " << c << ": " << to_string(as) << " x " << to_string(bs));
    require_close(one.to_host(), want);
    // Split over the batch (and free) dimensions the mesh divides: each device reads its block.
    for (auto const& sx : test::shardings_of(mesh, as)) {
      if (!sx.spec().size()) continue;
      auto xs = device_put(x, sx);
      INFO(to_string(sx.spec()));
      require_close(Tensor<float>(dot_general(xs, y, d)).to_host(), want);
    }
  }
}
