// A dot_general whose operand is a slice or transpose reads the view's operand in place (the plan
// makes no copy of the view; runtime/local_dot reads a strided matrix per batch entry, or copies
// the view into GEMM order itself where its strides do not allow that). Values against a host
// reference in double on every test mesh and spec; the plan's steps and bytes; mixed dtypes.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <vector>

#include "support/close.hpp"
#include "support/meshes.hpp"
#include "tessel/plan/cost_analysis.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace tessel;
using test::require_close;

namespace {

std::vector<float> values(Shape const& shape, float scale) {
  std::vector<float> v(static_cast<std::size_t>(shape.num_elements()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>(i * 37 % 101) - 50) * scale;
  return v;
}

// Row-major strides of a shape.
std::vector<std::int64_t> strides_of(Shape const& shape) {
  std::vector<std::int64_t> s(shape.size(), 1);
  for (std::size_t d = shape.size(); d-- > 1;) s[d - 1] = s[d] * shape[d];
  return s;
}

// scores (b, h, s, t) = sum over d of q (b, s, h, d) * cache (b, t, h, d), t < window: attention's
// q . k^T over the first `window` positions of a cache.
std::vector<float> host_scores(std::vector<float> const& q, Shape const& qs, std::vector<float> const& c,
                               Shape const& cs, std::int64_t window) {
  auto const qst = strides_of(qs), cst = strides_of(cs);
  std::vector<float> out;
  for (std::int64_t b = 0; b < qs[0]; ++b)
    for (std::int64_t h = 0; h < qs[2]; ++h)
      for (std::int64_t s = 0; s < qs[1]; ++s)
        for (std::int64_t t = 0; t < window; ++t) {
          double acc = 0;
          for (std::int64_t d = 0; d < qs[3]; ++d)
            acc += double(q[static_cast<std::size_t>(b * qst[0] + s * qst[1] + h * qst[2] + d)]) *
                   c[static_cast<std::size_t>(b * cst[0] + t * cst[1] + h * cst[2] + d)];
          out.push_back(static_cast<float>(acc));
        }
  return out;
}

// out (b, h, s, d) = sum over t < window of p (b, h, s, t) * cache (b, t, h, d): attention's p . v.
std::vector<float> host_mix(std::vector<float> const& p, Shape const& ps, std::vector<float> const& c,
                            Shape const& cs) {
  auto const pst = strides_of(ps), cst = strides_of(cs);
  std::vector<float> out;
  for (std::int64_t b = 0; b < ps[0]; ++b)
    for (std::int64_t h = 0; h < ps[1]; ++h)
      for (std::int64_t s = 0; s < ps[2]; ++s)
        for (std::int64_t d = 0; d < cs[3]; ++d) {
          double acc = 0;
          for (std::int64_t t = 0; t < ps[3]; ++t)
            acc += double(p[static_cast<std::size_t>(b * pst[0] + h * pst[1] + s * pst[2] + t)]) *
                   c[static_cast<std::size_t>(b * cst[0] + t * cst[1] + h * cst[2] + d)];
          out.push_back(static_cast<float>(acc));
        }
  return out;
}

int view_copies(plan::Plan const& plan) {
  return static_cast<int>(std::count_if(plan.steps.begin(), plan.steps.end(), [](plan::Step const& s) {
    return std::string_view(s.name) == "view_copy";
  }));
}

}  // namespace

TEST_CASE("attention's dots read a slice of a cache in place on every mesh and spec", "[expr][dot][view]") {
  Shape const cs{2, 16, 4, 8}, qs{2, 3, 4, 8};
  std::int64_t const window = 10;
  auto const hc = values(cs, 0.01f), hq = values(qs, 0.02f);
  auto const want_scores = host_scores(hq, qs, hc, cs, window);
  Shape const ps{2, 4, 3, window};
  auto const hp = values(ps, 0.03f);
  auto const want_mix = host_mix(hp, ps, hc, cs);
  int checked = 0, in_place = 0;
  for (auto const& mesh : test::all_meshes())
    for (auto const& spec : test::all_specs(mesh.axes(), 4)) {
      NamedSharding const s(mesh, spec);
      bool tiles = true;
      for (std::size_t d = 0; d < cs.size(); ++d) tiles = tiles && cs[d] % s.layout().shards_along(d) == 0;
      if (!tiles) continue;
      auto const cache = device_put(hc, cs, s);
      // q and p split as the cache over batch and heads (and q as it over head_dim).
      auto const q = device_put(hq, qs, NamedSharding(mesh, P(spec.dim(0), None, spec.dim(2), spec.dim(3))));
      auto const p = device_put(hp, ps, NamedSharding(mesh, P(spec.dim(0), spec.dim(2))));
      auto const seen = slice_in_dim(cache, 0, window, 1);
      auto const scores = dot_general(q, seen, DotDims{{3}, {3}, {0, 2}, {0, 2}});
      auto const mix = dot_general(p, seen, DotDims{{3}, {1}, {0, 1}, {0, 2}});
      INFO(to_string(mesh) << " cache " << to_string(spec) << "\n" << explain(scores));
      require_close(eval(scores).to_host(), want_scores);
      require_close(eval(mix).to_host(), want_mix);
      ++checked;
      // Where the plan takes the cache as it lies (split over batch and heads, the dots' batch
      // dimensions, or not at all), the GEMMs read its window in place: nothing copies it. (Split
      // over positions or head_dim, the window is gathered first, and that copy stays.)
      auto const& plan = plan_of(scores);
      if (plan.count(plan::StepKind::reshard) + plan.count(plan::StepKind::collective) == 0) {
        CHECK(view_copies(plan_of(scores)) == 0);
        CHECK(view_copies(plan_of(mix)) == 0);
        CHECK_THAT(explain(scores), ContainsSubstring("in place"));
        ++in_place;
      }
    }
  CHECK(checked > 50);
  CHECK(in_place > 20);
}

TEST_CASE("a view the GEMM cannot read as a strided matrix is copied into GEMM order by the dot", "[expr][dot][view]") {
  // x[:, :, 1:7] contracted over its last two dimensions: they no longer merge into one stride.
  Shape const xs{6, 5, 8}, ws{5, 6, 4};
  auto const hx = values(xs, 0.01f), hw = values(ws, 0.02f);
  std::vector<float> want;
  for (std::int64_t i = 0; i < 6; ++i)
    for (std::int64_t j = 0; j < 4; ++j) {
      double acc = 0;
      for (std::int64_t a = 0; a < 5; ++a)
        for (std::int64_t b = 0; b < 6; ++b)
          acc += double(hx[static_cast<std::size_t>(i * 40 + a * 8 + b + 1)]) *
                 hw[static_cast<std::size_t>(a * 24 + b * 4 + j)];
      want.push_back(static_cast<float>(acc));
    }
  for (auto const& mesh :
       {make_mesh({1}, {"a"}, {0}), make_mesh({2, 4}, {"a", "b"}), make_mesh({3, 2}, {"a", "b"}, {5, 0, 3, 1, 7, 2})}) {
    auto const x = device_put(hx, xs, NamedSharding(mesh, P("a")));
    auto const w = device_put(hw, ws, NamedSharding(mesh, P()));
    auto const y = dot_general(slice(x, {0, 0, 1}, {6, 5, 7}), w, DotDims{{1, 2}, {0, 1}, {}, {}});
    INFO(to_string(mesh) << "\n" << explain(y));
    CHECK(view_copies(plan_of(y)) == 0);
    require_close(eval(y).to_host(), want);
    // The slice transposed (b, a, i), contracted over (a, b): the same sums, read through the
    // transpose in place (the slice under it is copied: a view of a view).
    auto const yt =
        dot_general(transpose(slice(x, {0, 0, 1}, {6, 5, 7}), {2, 1, 0}), w, DotDims{{1, 0}, {0, 1}, {}, {}});
    INFO(explain(yt));
    require_close(eval(yt).to_host(), want);
  }
}

TEST_CASE("a slice of another dtype than the GEMM's is converted as it is copied", "[expr][dot][view]") {
  Shape const cs{2, 16, 4, 8}, qs{2, 3, 4, 8};
  std::int64_t const window = 10;
  auto hc = values(cs, 0.01f);
  for (auto& v : hc) v = static_cast<float>(bfloat16(v));  // (exact in bfloat16)
  auto const hq = values(qs, 0.02f);
  auto const want = host_scores(hq, qs, hc, cs, window);
  for (auto const& mesh : {make_mesh({1}, {"b"}, {0}), make_mesh({2, 4}, {"a", "b"})}) {
    NamedSharding const heads(mesh, P(None, None, "b", None));
    Tensor<bfloat16> const c16 = astype<bfloat16>(device_put(hc, cs, heads));
    auto const q = device_put(hq, qs, heads);
    auto const scores = dot_general(q, slice_in_dim(c16, 0, window, 1), DotDims{{3}, {3}, {0, 2}, {0, 2}});
    INFO(to_string(mesh) << "\n" << explain(scores));
    CHECK(view_copies(plan_of(scores)) == 0);
    require_close(eval(scores).to_host(), want);
  }
}

TEST_CASE("cost analysis counts the window a GEMM reads in place, not its cache", "[expr][dot][view][cost_analysis]") {
  Shape const cs{2, 16, 4, 8}, qs{2, 1, 4, 8};
  auto const mesh = make_mesh({1}, {"x"}, {0});
  auto const cache = device_put(values(cs, 0.01f), cs, NamedSharding(mesh, P()));
  auto const q = device_put(values(qs, 0.02f), qs, NamedSharding(mesh, P()));
  auto const scores = dot_general(q, slice_in_dim(cache, 0, 4, 1), DotDims{{3}, {3}, {0, 2}, {0, 2}});
  auto const costs = plan::cost_analysis(plan_of(scores));
  auto gemm = std::find_if(costs.begin(), costs.end(), [](auto const& c) { return c.kind == std::string("gemm"); });
  REQUIRE(gemm != costs.end());
  // q: 2 x 1 x 4 x 8 floats, the window: 2 x 4 x 4 x 8; scores 2 x 4 x 1 x 4.
  CHECK(gemm->bytes_read == (64 + 256) * 4);
  CHECK(gemm->bytes_written == 32 * 4);
  CHECK(gemm->m == 1);
  CHECK(gemm->n == 4);
  CHECK(gemm->k == 8);
  CHECK(gemm->batch == 8);
}
