// The planner's choices that issue 11 measured against XLA's partitioner, pinned by collective
// counts and bytes, each with the values checked against one device.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cmath>

#include "support/close.hpp"
#include "support/meshes.hpp"
#include "support/cost_models.hpp"
#include "tessel/plan/detail/make_plan.hpp"
#include "tessel/tessel.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace tessel;
using test::bandwidth_bound;
using test::require_close;
using test::whole;

namespace {

Tensor<float> draw(Shape const& shape, NamedSharding const& s, int k) {
  return random::normal(random::fold_in(PRNGKey(11), static_cast<std::uint32_t>(k)), shape, s);
}
int collectives(plan::Plan const& p) { return p.count(plan::StepKind::collective); }

double collective_bytes(plan::Plan const& p) {
  double b = 0;
  for (auto const& st : p.steps)
    if (st.kind == plan::StepKind::collective) {
      auto const& n = p.graph[static_cast<std::size_t>(st.node)];
      b += static_cast<double>(st.to->block_shape(n.shape).num_elements() * n.dtype_bytes);
    }
  return b;
}

}  // namespace

TEST_CASE("size-1 mesh axes are no-ops in propagation, reductions and reshards", "[plan][issue11][class5]") {
  auto mesh = make_mesh({1, 8}, {"a", "b"});
  auto x = draw({16, 32}, NamedSharding(mesh, P(None, {"a", "b"})), 0);
  auto y = draw({16, 32}, NamedSharding(mesh, P(None, "b")), 1);
  auto r = draw({16, 32}, NamedSharding(mesh, P("a", "b")), 2);
  SECTION("equal tilings meet without a collective") {
    auto const& p = plan_of(x + y);
    INFO(plan::to_string(p));
    CHECK(collectives(p) == 0);
    CHECK_THAT(plan::to_string(p), !ContainsSubstring("groups of 1"));
    require_close(eval(x + y).to_host(), eval(whole(x) + whole(y)).to_host());
  }
  SECTION("a reduction over a dimension split by a size-1 axis needs no all-reduce") {
    auto const& p = plan_of(sum(r, 0));
    INFO(plan::to_string(p));
    CHECK(collectives(p) == 0);
    require_close(eval(sum(r, 0)).to_host(), eval(sum(whole(r), 0)).to_host());
  }
  SECTION("a requested output that tiles alike is a relabel, not a gather and a slice") {
    NamedSharding want(mesh, P("a", "b"));
    auto const& p = plan_of(x * 2.0f, want);
    INFO(plan::to_string(p));
    CHECK(collectives(p) == 0);
    CHECK_THAT(plan::to_string(p), ContainsSubstring("no data moves"));
    Tensor<float> got = eval(x * 2.0f, want);
    CHECK(got.sharding() == want);
    require_close(got.to_host(), eval(whole(x) * 2.0f).to_host());
  }
  SECTION("a collective over a size-1 axis and another is over the other alone") {
    auto const& p = plan_of(sum(x, 1));
    INFO(plan::to_string(p));
    CHECK(collectives(p) == 1);
    CHECK_THAT(plan::to_string(p), ContainsSubstring("over mesh axes ('b') (groups of 8)"));
    CHECK(collective_bytes(p) == 16 * 4);
    require_close(eval(sum(x, 1)).to_host(), eval(sum(whole(x), 1)).to_host());
  }
}

TEST_CASE("C++ scalars take part in value identity; the plan serves other constants", "[plan][issue11][class2]") {
  for (auto const& mesh : {make_mesh({8}, {"x"}), make_mesh({4, 2}, {"x", "y"}), make_mesh({2, 2, 2}, {"x", "y", "z"})}) {
    INFO(to_string(mesh));
    auto x = draw({16, 32}, NamedSharding(mesh, P(None, "x")), 3);
    auto f = [](Tensor<float> const& t, float a, float b) { return sum(t * a, 1, true) * sum(t * b, 1, true); };
    auto const& same = plan_of(f(x, 2.0f, 2.0f));
    INFO(plan::to_string(same));
    CHECK(same.count(plan::Collective::all_reduce) == 1);
    CHECK(same.count(plan::StepKind::kernel) == 2);  // one reduction, then the product
    auto const& differ = plan_of(f(x, 2.0f, 3.0f));
    CHECK(differ.count(plan::Collective::all_reduce) == 2);
    // Other constants with the same pattern of equal scalars run the same plan, with their values.
    auto before = plan::cached_plans();
    CHECK(&plan_of(f(x, 5.0f, 5.0f)) == &same);
    CHECK(&plan_of(f(x, -1.0f, 4.0f)) == &differ);
    CHECK(plan::cached_plans() == before);
    for (auto [a, b] : {std::pair{2.0f, 2.0f}, {5.0f, 5.0f}, {2.0f, 3.0f}, {-1.0f, 4.0f}, {0.0f, -0.0f}}) {
      INFO(a << ", " << b);
      require_close(eval(f(x, a, b)).to_host(), eval(f(whole(x), a, b)).to_host());
    }
    // softmax of a shifted input computes its row max once: two all-reduces (max, sum).
    auto const& s = plan_of(softmax(x + 1.0f));
    INFO(plan::to_string(s));
    CHECK(s.count(plan::Collective::all_reduce) == 2);
    require_close(eval(softmax(x + 1.0f)).to_host(), eval(softmax(whole(x) + 1.0f)).to_host());
    require_close(eval(softmax(x + 7.0f)).to_host(), eval(softmax(whole(x) + 7.0f)).to_host());
    // An integer 2 and a double 2.0 are different scalars (they may promote differently).
    auto const& mixed = plan_of(sum(x * 2, 1, true) * sum(x * 2.0, 1, true));
    CHECK(mixed.count(plan::Collective::all_reduce) == 2);
  }
}

TEST_CASE("a broadcast operand's sharding is merged into the result's", "[plan][issue11][class3]") {
  SECTION("x[8,16] on P('a') + y[16] on P('b') over 4x2 is P('a', 'b') with no collective") {
    auto mesh = make_mesh({4, 2}, {"a", "b"});
    auto x = draw({8, 16}, NamedSharding(mesh, P("a", None)), 4);
    auto y = draw({16}, NamedSharding(mesh, P("b")), 5);
    auto const& p = plan_of(x + y);
    INFO(plan::to_string(p));
    CHECK(collectives(p) == 0);
    Tensor<float> z = x + y;
    CHECK(z.sharding() == NamedSharding(mesh, P("a", "b")));
    require_close(z.to_host(), eval(whole(x) + whole(y)).to_host());
  }
  SECTION("2x2x2: a row statistic and a column vector around a sharded matrix") {
    auto mesh = make_mesh({2, 2, 2}, {"a", "b", "c"});
    auto x = draw({24, 8}, NamedSharding(mesh, P("b")), 6);
    auto s = draw({8}, NamedSharding(mesh, P({"c", "a"})), 7);
    auto f = [](auto const& t, auto const& v) { return (t - mean(t, 1, true)) * v; };
    auto const& p = plan_of(f(x, s));
    INFO(plan::to_string(p));
    CHECK(collectives(p) == 0);
    Tensor<float> z = f(x, s);
    CHECK(z.sharding() == NamedSharding(mesh, P("b", {"c", "a"})));
    require_close(z.to_host(), eval(f(whole(x), whole(s))).to_host());
  }
  SECTION("1-D and non-square meshes: a column of a keepdims shape broadcasts along rows") {
    for (auto const& mesh : {make_mesh({8}, {"a"}), make_mesh({2, 4}, {"a", "b"})}) {
      INFO(to_string(mesh));
      bool flat = mesh.num_axes() == 1;
      auto x = draw({16, 32}, NamedSharding(mesh, flat ? P() : P(None, "b")), 8);
      auto col = draw({16, 1}, NamedSharding(mesh, P("a")), 9);
      auto const& p = plan_of(x - col * 2.0f);
      INFO(plan::to_string(p));
      CHECK(collectives(p) == 0);
      Tensor<float> z = x - col * 2.0f;
      CHECK(z.sharding() == NamedSharding(mesh, flat ? P("a") : P("a", "b")));
      require_close(z.to_host(), eval(whole(x) - whole(col) * 2.0f).to_host());
    }
  }
  SECTION("operands that disagree on a dimension still meet at the cheapest tiling") {
    auto mesh = make_mesh({4, 2}, {"a", "b"});
    auto x = draw({8, 16}, NamedSharding(mesh, P("a", "b")), 10);
    auto y = draw({8, 16}, NamedSharding(mesh, P("b", "a")), 11);
    require_close(eval(x * y).to_host(), eval(whole(x) * whole(y)).to_host());
  }
}

TEST_CASE("jit takes in_shardings without out_shardings, leaving the output to propagation", "[plan][issue11][jit]") {
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  NamedSharding rows(mesh, P("a")), cols(mesh, P(None, "b"));
  auto x0 = draw({16, 32}, replicated(mesh), 12);
  auto v0 = draw({32}, replicated(mesh), 13);
  auto f = jit([](auto const& x, auto const& v) { return tanh(x * 2.0f + v); }, {rows, NamedSharding(mesh, P("b"))});
  Tensor<float> y = f(x0, v0);
  // The arguments were put on their in_shardings; the result merges them (class 3).
  CHECK(y.sharding() == NamedSharding(mesh, P("a", "b")));
  CHECK(f.plan(x0, v0).count(plan::StepKind::collective) == 0);
  require_close(y.to_host(), eval(tanh(whole(x0) * 2.0f + whole(v0))).to_host());
  // One sharding per argument, as jax.jit wants.
  auto g = jit([](auto const& x) { return x * 2.0f; }, {rows, cols});
  CHECK_THROWS_WITH(g(x0), "jit: 2 in_shardings for a call with 1 argument; give one per argument (or none)");
  CHECK_THROWS_WITH(g.explain(x0), ContainsSubstring("2 in_shardings for a call with 1 argument"));
  // An in_sharding that cannot tile its argument names the dimension and the axes.
  auto h = jit([](auto const& x) { return x * 2.0f; }, {NamedSharding(mesh, P(None, None, "a"))});
  CHECK_THROWS_WITH(h(x0), ContainsSubstring("'a'"));
}

TEST_CASE("a reduction slices its input toward the requested output before reducing", "[plan][issue11][reduce]") {
  SECTION("4x2: the all-reduce becomes the reduce-scatter the request wants") {
    auto mesh = make_mesh({4, 2}, {"a", "b"});
    auto x = draw({8, 64}, NamedSharding(mesh, P(None, "b")), 14);
    NamedSharding want(mesh, P({"a", "b"}));
    auto const& p = plan_of(sum(x * 1.5f, 1), want);
    INFO(plan::to_string(p));
    CHECK(p.count(plan::Collective::reduce_scatter) == 1);
    CHECK(p.count(plan::Collective::all_reduce) == 0);
    CHECK(collective_bytes(p) == 1 * 4);  // each device ends with its one element
    Tensor<float> y = eval(sum(x * 1.5f, 1), want);
    CHECK(y.sharding() == want);
    require_close(y.to_host(), eval(sum(whole(x) * 1.5f, 1)).to_host());
  }
  SECTION("2x2x2: the all-reduce combines a quarter of the row") {
    auto mesh = make_mesh({2, 2, 2}, {"a", "b", "c"});
    auto x = draw({16, 32}, NamedSharding(mesh, P("a")), 15);
    NamedSharding want(mesh, P({"b", "c"}));
    auto const& p = plan_of(sum(x, 0), want);
    INFO(plan::to_string(p));
    CHECK(p.count(plan::Collective::all_reduce) == 1);
    CHECK(collective_bytes(p) == 8 * 4);
    Tensor<float> y = eval(sum(x, 0), want);
    CHECK(y.sharding() == want);
    require_close(y.to_host(), eval(sum(whole(x), 0)).to_host());
  }
}

namespace {
template <class E>
plan::Plan plan_under(plan::CostModel const& model, E const& e, std::optional<NamedSharding> const& out = std::nullopt) {
  plan::Graph g;
  plan::describe(e, g);
  return plan::make_plan(std::move(g), out, model);
}
}  // namespace

TEST_CASE("a requested output is met by resharding the result when that is cheaper", "[plan][issue11][class1]") {
  auto mesh = make_mesh({8}, {"a"});
  auto x = draw({8, 8}, NamedSharding(mesh, P("a")), 16);
  auto v = draw({8}, replicated(mesh), 17);
  NamedSharding out(mesh, P(None, "a"));
  auto f = [](auto const& t, auto const& w) { return softmax(softmax(t * 2.0f) + w); };
  // Rows stay whole where they are (no collective for any row statistic); one all-to-all at the end.
  for (auto const& model : {plan::CostModel{}, bandwidth_bound()}) {
    auto p = plan_under(model, f(x, v), out);
    INFO(plan::to_string(p));
    CHECK(collectives(p) == 1);
    CHECK(p.count(plan::Collective::all_to_all) == 1);
    CHECK(collective_bytes(p) == 8 * 4);
  }
  Tensor<float> y = eval(f(x, v), out);
  CHECK(y.sharding() == out);
  require_close(y.to_host(), eval(f(whole(x), whole(v))).to_host());
  // A request the computation suits is still pushed down: no reshard at the end.
  auto p = plan_under(plan::CostModel{}, x * 2.0f, NamedSharding(mesh, P("a")));
  CHECK(p.steps.size() == 1);
}

TEST_CASE("dot_general keeps an axis for the rhs's free factor while the lhs's contraction splits", "[plan][issue11][dot]") {
  auto mesh = make_mesh({4, 2}, {"a", "b"});
  auto x = draw({16, 32}, NamedSharding(mesh, P("a", "b")), 18);
  auto w = draw({32, 32}, NamedSharding(mesh, P(None, "a")), 19);
  auto p = plan_under(bandwidth_bound(), matmul(x, w));
  INFO(plan::to_string(p));
  // x's rows gathered over 'a' (16x16), w sliced to P('b', 'a'), the 16x8 result all-reduced over 'b'.
  CHECK(p.count(plan::Collective::all_gather) == 1);
  CHECK(p.count(plan::Collective::all_reduce) == 1);
  CHECK(collective_bytes(p) == (16 * 16 + 16 * 8) * 4);
  require_close(eval(matmul(x, w)).to_host(), eval(matmul(whole(x), whole(w))).to_host());
}

TEST_CASE("a value used in two shardings is computed once and resharded", "[plan][issue11][class1]") {
  // y = x @ w feeds a second product (which wants y as its contraction splits v) and an
  // elementwise use (which wants y as the result is laid out). Before, each use planned its own
  // copy of y: 3 GEMMs for f2, and up to 9 for f3, whose softmax names y four times.
  auto f2 = [](auto const& x, auto const& w, auto const& v) {
    auto y = matmul(x, w);
    return matmul(y, v) + tanh(y);
  };
  auto f3 = [](auto const& x, auto const& w, auto const& v) {
    auto y = matmul(x, w);
    return matmul(softmax(y), v) + softmax(y);
  };
  auto gemms = [](plan::Plan const& p) {
    int n = 0;
    for (auto const& st : p.steps) n += st.label.starts_with("tessel::gemm");
    return n;
  };
  SECTION("2x4: the second use takes the first's value as its product computed it, before its reshard") {
    auto mesh = make_mesh({2, 4}, {"a", "b"});
    auto x = draw({16, 32}, replicated(mesh), 20);
    auto w = draw({32, 16}, NamedSharding(mesh, P(None, "b")), 21);
    auto v = draw({16, 16}, NamedSharding(mesh, P("a")), 22);
    auto v2 = draw({16, 16}, NamedSharding(mesh, P(None, "b")), 23);
    for (auto const& model : {plan::CostModel{}, bandwidth_bound()}) {
      auto p = plan_under(model, f2(x, w, v));
      INFO(plan::to_string(p));
      CHECK(gemms(p) == 2);
      if (model == bandwidth_bound()) {
        // y on P(None, 'b') (no collective), one all-to-all to P(None, 'a') for the product, which
        // all-reduces its partial sums; tanh reads y where the GEMM left it. (The default model's
        // latencies choose another plan for the product, with y still made once.)
        CHECK(collectives(p) == 2);
        CHECK(p.count(plan::Collective::all_to_all) == 1);
        CHECK(p.count(plan::Collective::all_reduce) == 1);
        CHECK(collective_bytes(p) == (16 * 8 + 16 * 4) * 4);
      }
      auto q = plan_under(model, f3(x, w, v2));
      INFO(plan::to_string(q));
      CHECK(gemms(q) == 2);
    }
    require_close(eval(f2(x, w, v)).to_host(), eval(f2(whole(x), whole(w), whole(v))).to_host());
    require_close(eval(f3(x, w, v2)).to_host(), eval(f3(whole(x), whole(w), whole(v2))).to_host());
  }
  SECTION("every mesh: no value is computed twice in one sharding, and the values hold") {
    int checked = 0;
    for (auto const& mesh : test::all_meshes()) {
      auto xs = test::shardings_of(mesh, {24, 48});
      auto vs = test::shardings_of(mesh, {24, 24});
      auto const& first = mesh.axes().name(mesh.num_axes() - 1);
      NamedSharding ws(mesh, P(None, first));
      for (std::size_t a = 0; a < xs.size(); a += 3)
        for (std::size_t b = (a / 3) % 5; b < vs.size(); b += 5) {
          auto x = draw({24, 48}, xs[a], 30);
          auto w = draw({48, 24}, ws, 31);
          auto v = draw({24, 24}, vs[b], 32);
          for (int which = 0; which < 2; ++which) {
            auto p = which == 0 ? plan_under(bandwidth_bound(), f2(x, w, v)) : plan_under(bandwidth_bound(), f3(x, w, v));
            INFO(to_string(mesh) << " x " << to_string(xs[a]) << " v " << to_string(vs[b]) << " f" << which + 2 << "\n"
                                 << plan::to_string(p));
            // One GEMM per (value, sharding): y at most once in each sharding it is made in.
            auto classes = plan::value_classes(p.graph);
            std::vector<std::pair<int, std::string>> made;
            for (auto const& st : p.steps)
              if (st.label.starts_with("tessel::gemm")) {
                auto const& np = p.nodes[static_cast<std::size_t>(st.node)];
                std::pair<int, std::string> key{classes[static_cast<std::size_t>(st.node)], to_string(*np.partial)};
                CHECK(std::find(made.begin(), made.end(), key) == made.end());
                made.push_back(key);
              }
            CHECK(gemms(p) <= 3);
          }
          if ((a + b) % 4 == 0) {
            require_close(eval(f2(x, w, v)).to_host(), eval(f2(whole(x), whole(w), whole(v))).to_host());
            require_close(eval(f3(x, w, v)).to_host(), eval(f3(whole(x), whole(w), whole(v))).to_host());
            ++checked;
          }
        }
    }
    CHECK(checked > 20);
  }
}

TEST_CASE("a reshape that merges a split later dimension moves its axes with an all-to-all, not a gather",
          "[plan][issue11][class4][view]") {
  // (8, 8, 8) -> (64, 8) merges dimensions 0 and 1. With dimension 1 split, no device holds a
  // contiguous piece of the merged dimension; moving its axes onto dimension 0 (an all-to-all)
  // makes the merge zero-copy and keeps the work split, where gathering dimension 1 would copy
  // the whole of it to every device (XLA's reshape handler does the former).
  int meshes = 0;
  for (auto const& mesh : test::all_meshes()) {
    if (mesh.num_devices() == 1) continue;
    auto const& last = mesh.axes().name(mesh.num_axes() - 1);
    if (8 % mesh.axes().size(mesh.num_axes() - 1) != 0 || mesh.axes().size(mesh.num_axes() - 1) == 1) continue;
    auto x = draw({8, 8, 8}, NamedSharding(mesh, P(None, last)), 40);
    auto f = [](auto const& t) { return reshape(t, {64, 8}) * 2.0f; };
    auto p = plan_under(bandwidth_bound(), f(x));
    INFO(to_string(mesh) << "\n" << plan::to_string(p));
    CHECK(p.count(plan::Collective::all_gather) == 0);
    CHECK(p.count(plan::Collective::all_to_all) == 1);
    CHECK(collectives(p) == 1);
    CHECK(p.nodes.back().out->spec() == P(last));
    require_close(eval(f(x)).to_host(), eval(f(whole(x))).to_host());
    ++meshes;
  }
  CHECK(meshes >= 4);
}

TEST_CASE("an elementwise value several GEMMs read is computed once", "[plan][issue11][class1]") {
  // A transformer's layer_norm(x) feeds the Q, K and V projections: one fused kernel, not three.
  for (auto const& mesh : test::all_meshes()) {
    auto const& last = mesh.axes().name(mesh.num_axes() - 1);
    auto x = draw({24, 16}, replicated(mesh), 50);
    auto w1 = draw({16, 8}, NamedSharding(mesh, P(None, last)), 51);
    auto w2 = draw({16, 8}, NamedSharding(mesh, P(None, last)), 52);
    auto w3 = draw({16, 8}, NamedSharding(mesh, P(None, last)), 53);
    auto f = [](auto const& x, auto const& a, auto const& b, auto const& c) {
      auto h = tanh(x * 2.0f);
      return matmul(h, a) + matmul(h, b) * matmul(h, c);
    };
    for (auto const& model : {plan::CostModel{}, bandwidth_bound()}) {
      auto p = plan_under(model, f(x, w1, w2, w3));
      INFO(to_string(mesh) << "\n" << plan::to_string(p));
      int tanh_kernels = 0;
      for (auto const& st : p.steps) tanh_kernels += st.label == "tessel::fused[mul,tanh]";
      CHECK(tanh_kernels == 1);
    }
    require_close(eval(f(x, w1, w2, w3)).to_host(), eval(f(whole(x), whole(w1), whole(w2), whole(w3))).to_host());
  }
}

TEST_CASE("the attention output projection splits its multiply and all-reduces, as Megatron's (GEMM flops priced)",
          "[plan][issue28][dot]") {
  // GPT-2's attention output: the heads split over 'mp', the projection's rows too. Priced by
  // communication alone, gathering the activations and the weight and multiplying whole on every
  // 'mp' device looked cheaper than the all-reduce (4x the GEMM work); with each candidate's GEMM
  // priced by the kernel roofline the planner keeps the multiply split, in both forms.
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  auto heads = draw({8, 64, 12, 64}, NamedSharding(mesh, P("dp", None, "mp", None)), 40);  // (b, s, h, d)
  auto wo = draw({12, 64, 768}, NamedSharding(mesh, P("mp", None, None)), 41);            // (h, d, e)
  auto merged = draw({8, 64, 768}, NamedSharding(mesh, P("dp", None, "mp")), 42);         // (b, s, h * d)
  auto w = draw({768, 768}, NamedSharding(mesh, P("mp", None)), 43);
  auto project = [](auto const& a, auto const& b) { return dot_general(a, b, DotDims{{2, 3}, {0, 1}, {}, {}}); };
  auto dense = [](auto const& a, auto const& b) { return dot_general(a, b, DotDims{{2}, {0}, {}, {}}); };
  for (auto const& p : {plan_under(plan::CostModel{}, project(heads, wo)), plan_under(plan::CostModel{}, dense(merged, w))}) {
    INFO(plan::to_string(p));
    CHECK(p.count(plan::Collective::all_gather) == 0);
    CHECK(p.count(plan::Collective::all_reduce) == 1);
  }
  require_close(eval(project(heads, wo)).to_host(), eval(project(whole(heads), whole(wo))).to_host());
}
