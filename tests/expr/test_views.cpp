// transpose, reshape, slice and concatenate: sharded results equal the host computation on every
// test mesh and spec, the planner keeps shardings where they survive (zero-copy reshape, fused
// views, no collectives for slices of unsharded dimensions) and gathers where they cannot, and bad
// arguments fail naming the dimensions and sizes.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <numeric>

#include "support/data.hpp"
#include "support/meshes.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace tessel;
using tessel::test::for_each_even_sharding;
using tessel::test::iota_data;

namespace {

// Host references on row-major data.
std::vector<float> host_transpose(std::vector<float> const& x, Shape const& shape, std::vector<int> const& perm) {
  Shape out;
  for (int p : perm) out.push_back(shape[static_cast<std::size_t>(p)]);
  std::vector<float> r(x.size());
  std::vector<std::int64_t> in_stride(shape.size());
  std::int64_t st = 1;
  for (std::size_t d = shape.size(); d-- > 0;) {
    in_stride[d] = st;
    st *= shape[d];
  }
  for (std::int64_t i = 0; i < out.num_elements(); ++i) {
    std::int64_t rem = i, src = 0;
    for (std::size_t j = out.size(); j-- > 0;) {
      src += (rem % out[j]) * in_stride[static_cast<std::size_t>(perm[j])];
      rem /= out[j];
    }
    r[static_cast<std::size_t>(i)] = x[static_cast<std::size_t>(src)];
  }
  return r;
}

std::vector<float> host_slice(std::vector<float> const& x, Shape const& shape, std::vector<std::int64_t> const& start,
                              std::vector<std::int64_t> const& limit) {
  Shape out;
  for (std::size_t d = 0; d < shape.size(); ++d) out.push_back(limit[d] - start[d]);
  std::vector<float> r;
  for (std::int64_t i = 0; i < out.num_elements(); ++i) {
    std::int64_t rem = i, src = 0, st = 1;
    for (std::size_t d = shape.size(); d-- > 0;) {
      src += (start[d] + rem % out[d]) * st;
      rem /= out[d];
      st *= shape[d];
    }
    r.push_back(x[static_cast<std::size_t>(src)]);
  }
  return r;
}

Tensor<float> put(std::vector<float> const& host, Shape const& shape, NamedSharding const& s) {
  return device_put(host, shape, s);
}


}  // namespace

TEST_CASE("transpose equals the host transpose on every mesh and spec, fused into its consumer", "[expr][view]") {
  Shape shape{4, 6, 8};
  auto host = iota_data<float>(shape);
  auto ref = host_transpose(host, shape, {2, 0, 1});
  for_each_even_sharding(shape, [&](NamedSharding const& s) {
    INFO(to_string(s.mesh()) << " " << to_string(s.spec()));
    auto x = put(host, shape, s);
    Tensor<float> t = transpose(x, {2, 0, 1});
    REQUIRE(t.shape() == Shape{8, 4, 6});
    REQUIRE(t.to_host() == ref);
    // The spec is permuted with the dimensions: no data crosses devices.
    CHECK(t.sharding().layout().dim_axes(0) == s.layout().dim_axes(2));
    CHECK(t.sharding().layout().dim_axes(1) == s.layout().dim_axes(0));
  });
  // Inside an expression the transpose is a strided read of one fused kernel.
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  auto x = put(host, shape, NamedSharding(mesh, P("a", None, "b")));
  auto const& plan = plan_of(exp(transpose(x, {2, 0, 1})) * 2.0f);
  CHECK(plan.count(plan::StepKind::kernel) == 1);
  CHECK(plan.steps.size() == 1);
  CHECK_THAT(explain(exp(transpose(x, {2, 0, 1})) * 2.0f), ContainsSubstring("transpose(view), exp, mul"));
  Tensor<float> y = exp(transpose(x, {2, 0, 1})) * 2.0f;
  Tensor<float> one = exp(transpose(device_put(host, shape), {2, 0, 1})) * 2.0f;
  CHECK(y.to_host() == one.to_host());
  // Default: all dimensions reversed (x.T), and negative axes.
  CHECK(eval(transpose(x)).to_host() == host_transpose(host, shape, {2, 1, 0}));
  CHECK(eval(transpose(x, {-1, 0, 1})).to_host() == ref);
}

TEST_CASE("reshape splits and merges dimensions, zero-copy where the sharding survives", "[expr][view]") {
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  Shape shape{8, 6, 4};
  auto host = iota_data<float>(shape);
  SECTION("merge of a sharded leading dimension keeps its axes and moves nothing") {
    auto x = put(host, shape, NamedSharding(mesh, P("b", None, None)));
    auto before = execution_counts();
    Tensor<float> r = reshape(x, {48, 4});
    CHECK(execution_counts().kernels == before.kernels);
    CHECK(execution_counts().reshards == before.reshards);
    CHECK(r.sharding() == NamedSharding(mesh, P("b")));
    CHECK(r.to_host() == host);
    CHECK(plan_of(reshape(x, {48, 4})).count(plan::StepKind::view) == 1);
    CHECK_THAT(explain(reshape(x, {48, 4})), ContainsSubstring("zero-copy"));
  }
  SECTION("split of a sharded dimension keeps its axes when the leading part divides") {
    auto x = put(host, shape, NamedSharding(mesh, P("a", None, "b")));
    Tensor<float> r = reshape(x, {4, 2, 6, 4, 1});
    CHECK(r.sharding() == NamedSharding(mesh, P("a", None, None, "b")));
    CHECK(r.to_host() == host);
    // 4 -> (2, 2) cannot keep 'b' (4 devices) on a dimension of 2: that group is gathered.
    Tensor<float> g = reshape(x, {4, 2, 6, 2, 2});
    CHECK(g.sharding() == NamedSharding(mesh, P("a")));
    CHECK(g.to_host() == host);
  }
  SECTION("a sharded minor dimension of a merge is gathered first (explain says so)") {
    auto x = put(host, shape, NamedSharding(mesh, P("a", None, "b")));
    auto const& plan = plan_of(reshape(x, {8, 24}));
    CHECK(plan.count(plan::Collective::all_gather) + plan.count(plan::StepKind::reshard) >= 1);
    Tensor<float> r = reshape(x, {8, 24});
    CHECK(r.sharding() == NamedSharding(mesh, P("a")));
    CHECK(r.to_host() == host);
  }
  SECTION("-1 is inferred") {
    auto x = put(host, shape, NamedSharding(mesh, P("a")));
    Tensor<float> r = reshape(x, {-1, 12});
    CHECK(r.shape() == Shape{16, 12});
    CHECK(r.to_host() == host);
  }
}

TEST_CASE("reshape equals the host data on every mesh and spec, alone and fused", "[expr][view]") {
  Shape shape{4, 6, 8};
  auto host = iota_data<float>(shape);
  for (auto const& target : {Shape{24, 8}, Shape{4, 48}, Shape{2, 2, 3, 2, 8}, Shape{192}, Shape{8, 3, 8}}) {
    for_each_even_sharding(shape, [&](NamedSharding const& s) {
      INFO(to_string(s.mesh()) << " " << to_string(s.spec()) << " -> " << to_string(target));
      auto x = put(host, shape, s);
      Tensor<float> r = detail::make_view(x, ViewSpec{ViewKind::reshape, {}, {}, {}}, target);
      REQUIRE(r.shape() == target);
      REQUIRE(r.to_host() == host);
      // Fused with elementwise work on another tensor of the target shape.
      auto other = device_put(iota_data<float>(target, 1.0f), target, r.sharding());
      Tensor<float> f = detail::make_view(x, ViewSpec{ViewKind::reshape, {}, {}, {}}, target) * 2.0f + other;
      auto want = iota_data<float>(target, 1.0f);
      for (std::size_t i = 0; i < want.size(); ++i) want[i] = host[i] * 2.0f + want[i];
      REQUIRE(f.to_host() == want);
    });
  }
}

TEST_CASE("slices of unsharded dimensions need no communication; sharded ones are gathered first", "[expr][view]") {
  Shape shape{8, 12};
  auto host = iota_data<float>(shape);
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  SECTION("slice along the unsharded dimension: one fused kernel, no collective") {
    auto x = put(host, shape, NamedSharding(mesh, P({"a", "b"}, None)));
    auto e = slice_in_dim(x, 3, 10, 1) + 1.0f;
    auto const& plan = plan_of(e);
    CHECK(plan.steps.size() == 1);
    CHECK(plan.count(plan::StepKind::kernel) == 1);
    Tensor<float> r = e;
    auto want = host_slice(host, shape, {0, 3}, {8, 10});
    for (auto& v : want) v += 1.0f;
    CHECK(r.to_host() == want);
    CHECK(r.sharding() == NamedSharding(mesh, P({"a", "b"})));
  }
  SECTION("slice along a sharded dimension: all-gather of that dimension, then a local slice") {
    auto x = put(host, shape, NamedSharding(mesh, P("a", "b")));
    auto const& plan = plan_of(slice(x, {2, 0}, {6, 12}));
    CHECK(plan.count(plan::Collective::all_gather) == 1);
    Tensor<float> r = slice(x, {2, 0}, {6, 12});
    CHECK(r.to_host() == host_slice(host, shape, {2, 0}, {6, 12}));
    CHECK(r.sharding() == NamedSharding(mesh, P(None, "b")));
  }
  SECTION("every mesh and spec") {
    for_each_even_sharding(shape, [&](NamedSharding const& s) {
      INFO(to_string(s.mesh()) << " " << to_string(s.spec()));
      auto x = put(host, shape, s);
      REQUIRE(eval(slice(x, {1, 2}, {7, 11})).to_host() == host_slice(host, shape, {1, 2}, {7, 11}));
      REQUIRE(eval(slice_in_dim(x, 4, 8, 0)).to_host() == host_slice(host, shape, {4, 0}, {8, 12}));
      REQUIRE(eval(slice(x, {0, 0}, {8, 12})).to_host() == host);
    });
  }
}

TEST_CASE("concatenate equals the host concatenation on every mesh and spec", "[expr][view]") {
  Shape a_shape{8, 4}, b_shape{8, 8};
  auto ha = iota_data<float>(a_shape), hb = iota_data<float>(b_shape, 1000.0f);
  std::vector<float> want;
  for (int r = 0; r < 8; ++r) {
    for (int c = 0; c < 4; ++c) want.push_back(ha[static_cast<std::size_t>(r * 4 + c)]);
    for (int c = 0; c < 8; ++c) want.push_back(hb[static_cast<std::size_t>(r * 8 + c)]);
  }
  for_each_even_sharding(a_shape, [&](NamedSharding const& s) {
    INFO(to_string(s.mesh()) << " " << to_string(s.spec()));
    auto a = put(ha, a_shape, s);
    auto b = put(hb, b_shape, s);
    Tensor<float> r = concatenate(1, a, b * 1.0f);
    REQUIRE(r.shape() == Shape{8, 12});
    REQUIRE(r.to_host() == want);
    // The concatenated dimension comes out unsharded, the other keeps its axes.
    REQUIRE(r.sharding().layout().dim_axes(1).empty());
    REQUIRE(r.sharding().layout().dim_axes(0) == s.layout().dim_axes(0));
  });
  // Along dimension 0, three operands, with its result used by a fused consumer.
  auto mesh = make_mesh({4, 2}, {"a", "b"});
  NamedSharding s(mesh, P(None, "b"));
  auto a = put(ha, a_shape, s);
  auto const& plan = plan_of(exp(concatenate(0, a, a, a)));
  CHECK(plan.count(plan::StepKind::kernel) == 2);
  CHECK(plan.count(plan::Collective::all_gather) == 0);
  Tensor<float> three = concatenate(-2, a, a, a);
  std::vector<float> w3 = ha;
  w3.insert(w3.end(), ha.begin(), ha.end());
  w3.insert(w3.end(), ha.begin(), ha.end());
  CHECK(three.to_host() == w3);
}

TEST_CASE("views and concatenate around a matmul match one device", "[expr][view][dot]") {
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  Shape xs{16, 8}, ws{12, 8};
  auto hx = iota_data<float>(xs), hw = iota_data<float>(ws, 0.5f);
  for (auto& v : hx) v = v / 100.0f;
  for (auto& v : hw) v = v / 100.0f;
  auto x = put(hx, xs, NamedSharding(mesh, P("dp", None)));
  auto w = put(hw, ws, NamedSharding(mesh, P("mp", None)));
  auto x1 = device_put(hx, xs), w1 = device_put(hw, ws);
  Tensor<float> y = reshape(matmul(x, transpose(w)), {4, 4, 12});
  Tensor<float> y1 = reshape(matmul(x1, transpose(w1)), {4, 4, 12});
  auto got = y.to_host(), want = y1.to_host();
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) REQUIRE(std::abs(got[i] - want[i]) <= 1e-5f * (1 + std::abs(want[i])));
}

TEST_CASE("bad view arguments fail naming the dimension, sizes or axes", "[expr][view][errors]") {
  auto mesh = make_mesh({8}, {"x"});
  auto x = put(iota_data<float>({8, 6}), {8, 6}, NamedSharding(mesh, P("x")));
  auto host_before = x.to_host();
  auto message = [](auto&& f) {
    try {
      f();
    } catch (Error const& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK_THAT(message([&] { (void)transpose(x, {0, 0}); }), ContainsSubstring("dimension 0 appears twice"));
  CHECK_THAT(message([&] { (void)transpose(x, {0, 2}); }), ContainsSubstring("axis 2 in (0, 2) is out of range"));
  CHECK_THAT(message([&] { (void)transpose(x, {0}); }),
             ContainsSubstring("transpose: axes (0,) name 1 dimensions, but the operand (8, 6) has 2"));
  CHECK_THAT(message([&] { (void)reshape(x, {5, 10}); }),
             ContainsSubstring("cannot reshape (8, 6) (48 elements) into (5, 10) (50 elements)"));
  CHECK_THAT(message([&] { (void)reshape(x, {-1, -1}); }), ContainsSubstring("-1 at dimensions 0 and 1"));
  CHECK_THAT(message([&] { (void)reshape(x, {-1, 5}); }), ContainsSubstring("cannot infer the -1 at dimension 0"));
  CHECK_THAT(message([&] { (void)reshape(x, {-2, 5}); }), ContainsSubstring("dimension 0 of the new shape is -2"));
  CHECK_THAT(message([&] { (void)slice(x, {0, 2}, {8, 7}); }),
             ContainsSubstring("dimension 1 of the operand (8, 6) has size 6; the slice [2:7]"));
  CHECK_THAT(message([&] { (void)slice(x, {0}, {8}); }), ContainsSubstring("rank 2, but 1 start and 1 limit"));
  CHECK_THAT(message([&] { (void)slice_in_dim(x, 0, 2, 2); }), ContainsSubstring("axis 2 is out of range"));
  auto y = put(iota_data<float>({8, 5}), {8, 5}, NamedSharding(mesh, P("x")));
  CHECK_THAT(message([&] { (void)concatenate(0, x, y); }),
             ContainsSubstring("operand 1 has shape (8, 5) and operand 0 has shape (8, 6); they differ in dimension 1 "
                               "(5 vs 6)"));
  CHECK_THAT(message([&] { (void)concatenate(2, x, y); }), ContainsSubstring("axis 2 is out of range"));
  auto z = put(iota_data<float>({48}), {48}, NamedSharding(mesh, P("x")));
  CHECK_THAT(message([&] { (void)concatenate(0, x, z); }), ContainsSubstring("operand 1 has shape (48,) (rank 1)"));
  auto other = make_mesh({2, 4}, {"a", "b"}, {0, 1, 2, 3, 4, 5, 6, 7});
  (void)other;
  CHECK(x.to_host() == host_before);
}

TEST_CASE("reshape with size-1 and empty dimensions", "[expr][view]") {
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  Shape shape{1, 8, 4};
  auto host = iota_data<float>(shape);
  auto x = put(host, shape, NamedSharding(mesh, P(None, {"a", "b"})));
  // Leading and trailing 1s do not stop the sharding of the 8 from surviving.
  Tensor<float> r = reshape(x, {8, 4, 1});
  CHECK(r.sharding() == NamedSharding(mesh, P({"a", "b"})));
  CHECK(r.to_host() == host);
  Tensor<float> flat = reshape(x, {32});
  CHECK(flat.sharding() == NamedSharding(mesh, P({"a", "b"})));
  CHECK(flat.to_host() == host);
  // An empty tensor reshapes to another empty shape.
  auto empty = put({}, {0, 8}, NamedSharding(mesh, P(None, "b")));
  Tensor<float> e = reshape(empty, {8, 0});
  CHECK(e.shape() == Shape{8, 0});
  CHECK(e.to_host().empty());
}

TEST_CASE("views of one type but different kinds never share a cached plan", "[expr][view][cache]") {
  // A rank-2 slice [1:2, 1:3] and a reshape to (1, 1, 2, 3, 1, 2) are both ViewNode<TensorNode>,
  // and their numbers read alike (1 1 2 3 1 2): the plan key must tell them apart (fuzzer finding).
  auto mesh = make_mesh({2, 3}, {"a", "b"}, {0, 1, 2, 3, 4, 5});
  auto host = test::iota_data<float>({2, 6});
  for (auto const& spec : {P("a", "b"), P("a"), P(None, "b"), P()}) {
    INFO(to_string(spec));
    auto x = device_put(host, Shape{2, 6}, NamedSharding(mesh, spec));
    auto run = [](auto const& view) { return Tensor<float>(Tensor<float>(view) * 2.0f).to_host(); };
    auto sliced = run(slice(x, {1, 1}, {2, 3}));
    CHECK(sliced == std::vector<float>{2 * host[7], 2 * host[8]});
    auto reshaped = run(reshape(x, {1, 1, 2, 3, 1, 2}));
    REQUIRE(reshaped.size() == 12);
    for (std::size_t i = 0; i < 12; ++i) CHECK(reshaped[i] == 2 * host[i]);
    auto transposed = run(transpose(x));
    CHECK(transposed[1] == 2 * host[6]);
  }
}
