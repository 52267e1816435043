// Uneven shardings: a dimension of size n split k ways gives each device a block of ceil(n/k), the
// last devices' short or empty. Every op on such operands, on every test mesh, against the same
// computation on one device: bit for bit where the op is exact (elementwise, max/min, argmax,
// views, reshards, take, random draws), within float32 rounding where a sharded sum adds in
// another order. Sizes per split dimension: 1, k-1, k+1, 2k-1 and a prime.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "support/close.hpp"
#include "support/data.hpp"
#include "support/meshes.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using Catch::Matchers::ContainsSubstring;
using test::require_close;
using test::whole;

namespace {

// The sizes a dimension split k ways is tested with (each distinct, none zero).
std::vector<std::int64_t> uneven_sizes(std::int64_t k) {
  std::vector<std::int64_t> out;
  for (std::int64_t n : {std::int64_t{1}, k - 1, k + 1, 2 * k - 1, std::int64_t{13}})
    if (n > 0 && std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  return out;
}

// A rank-2 case: a mesh, a spec and a shape that spec splits unevenly (or not at all, for size 1
// over one device).
struct Case {
  Mesh mesh;
  PartitionSpec spec;
  Shape shape;
};

// Per mesh: rows over every axis, columns over every axis, and (with two axes or more) rows over
// the first and columns over the second; each split dimension takes every uneven size in turn
// (the other dimension 5, or the second split's sizes in step).
std::vector<Case> uneven_cases() {
  std::vector<Case> cases;
  for (auto const& mesh : test::all_meshes()) {
    FixedVector<AxisName, max_mesh_axes> all;
    for (std::size_t a = 0; a < mesh.axes().num_axes(); ++a) all.push_back(mesh.axes().name(a));
    auto k = static_cast<std::int64_t>(mesh.num_devices());
    for (auto n : uneven_sizes(k)) {
      cases.push_back({mesh, P(DimSpec::of(all)), Shape{n, 5}});
      cases.push_back({mesh, P(None, DimSpec::of(all)), Shape{3, n}});
    }
    if (mesh.axes().num_axes() >= 2) {
      auto a = mesh.axes().name(0), b = mesh.axes().name(1);
      auto rows = uneven_sizes(mesh.axes().size(0)), cols = uneven_sizes(mesh.axes().size(1));
      for (std::size_t i = 0; i < std::min(rows.size(), cols.size()); ++i)
        cases.push_back({mesh, P(a.view(), b.view()), Shape{rows[i], cols[i]}});
    }
  }
  return cases;
}

Tensor<float> draw(Shape const& shape, NamedSharding const& s, std::uint32_t seed) {
  return random::normal(random::fold_in(random::PRNGKey(7), seed), shape, s);
}

#define SAME_BITS(sharded, single) CHECK(test::bitwise_equal(eval(sharded).to_host(), eval(single).to_host()))
#define CLOSE(sharded, single) require_close(eval(sharded).to_host(), eval(single).to_host())

}  // namespace

TEST_CASE("an uneven tensor's shards are its real blocks, and it reads back whole", "[expr][uneven]") {
  for (auto const& c : uneven_cases()) {
    NamedSharding s(c.mesh, c.spec);
    INFO(to_string(s) << " shape " << to_string(c.shape));
    auto data = test::iota_data<float>(c.shape);
    auto x = device_put(data, c.shape, s);
    for (auto const& shard : x.addressable_shards()) {
      REQUIRE(shard.shape == shard.index.extent());
      REQUIRE(static_cast<std::int64_t>(shard.data.size()) == shard.shape.num_elements());
    }
    CHECK(test::shards_match(x, data));
    CHECK(test::bitwise_equal(x.to_host(), data));
    // make_array_from_callback fills each real block; random draws equal the unsharded draw.
    auto y = make_array_from_callback<float>(c.shape, s, [&](Box const& index, std::span<float> block) {
      REQUIRE(static_cast<std::int64_t>(block.size()) == index.num_elements());
      for (std::int64_t i = 0; i < index.num_elements(); ++i)
        block[static_cast<std::size_t>(i)] = test::element_at(data, c.shape, index, i);
    });
    CHECK(test::bitwise_equal(y.to_host(), data));
    auto key = random::PRNGKey(3);
    CHECK(test::bitwise_equal(random::normal<float>(key, c.shape, s).to_host(),
                              random::normal<float>(key, c.shape).to_host()));
    CHECK(test::bitwise_equal(random::uniform<float>(key, c.shape, s, -1.0f, 2.0f).to_host(),
                              random::uniform<float>(key, c.shape, -1.0f, 2.0f).to_host()));
  }
}

TEST_CASE("elementwise ops, broadcasts and views of uneven operands", "[expr][uneven]") {
  for (auto const& c : uneven_cases()) {
    NamedSharding s(c.mesh, c.spec);
    INFO(to_string(s) << " shape " << to_string(c.shape));
    auto x = draw(c.shape, s, 1), y = draw(c.shape, s, 2);
    auto row = draw(Shape{c.shape[1]}, NamedSharding(c.mesh, P()), 3);
    auto xo = whole(x), yo = whole(y), rowo = whole(row);
    SAME_BITS(tanh(x * y + 1.0f) - x / 3.0f, tanh(xo * yo + 1.0f) - xo / 3.0f);
    SAME_BITS(x * row + 0.5f, xo * rowo + 0.5f);
    SAME_BITS(transpose(x), transpose(xo));
    SAME_BITS(transpose(x) * 2.0f + transpose(y), transpose(xo) * 2.0f + transpose(yo));
    SAME_BITS(reshape(x, {c.shape[0] * c.shape[1]}), reshape(xo, {c.shape[0] * c.shape[1]}));
    SAME_BITS(reshape(x, {c.shape[0], c.shape[1], 1}) * 3.0f, reshape(xo, {c.shape[0], c.shape[1], 1}) * 3.0f);
    std::int64_t half = c.shape[0] / 2;
    SAME_BITS(slice_in_dim(x, half, c.shape[0], 0) + 1.0f, slice_in_dim(xo, half, c.shape[0], 0) + 1.0f);
    SAME_BITS(concatenate(0, x, y), concatenate(0, xo, yo));
    SAME_BITS(concatenate(1, x, y * 2.0f), concatenate(1, xo, yo * 2.0f));
  }
}

TEST_CASE("reductions of uneven operands ignore the missing elements, across the all-reduce too",
          "[expr][uneven][reduce]") {
  for (auto const& c : uneven_cases()) {
    NamedSharding s(c.mesh, c.spec);
    INFO(to_string(s) << " shape " << to_string(c.shape));
    // All negative, so that a device contributing 0 for its missing elements would win a max.
    auto x = draw(c.shape, s, 4) * 0.25f - 3.0f;
    auto xo = whole(x);
    for (int axis : {0, 1}) {
      INFO("axis " << axis);
      CLOSE(sum(x, {axis}), sum(xo, {axis}));
      CLOSE(mean(x, {axis}), mean(xo, {axis}));
      CLOSE(prod(x * 0.25f, {axis}), prod(xo * 0.25f, {axis}));
      SAME_BITS(max(x, {axis}), max(xo, {axis}));
      SAME_BITS(min(-x, {axis}), min(-xo, {axis}));
      CLOSE(var(x, {axis}), var(xo, {axis}));
      CLOSE(logsumexp(x, axis), logsumexp(xo, axis));
      CLOSE(softmax(x, axis), softmax(xo, axis));
      Tensor<std::int32_t> am = argmax(x, axis), amo = argmax(xo, axis);
      CHECK(am.to_host() == amo.to_host());
      Tensor<std::int32_t> an = argmin(x, axis), ano = argmin(xo, axis);
      CHECK(an.to_host() == ano.to_host());
      CLOSE(cumsum(x, axis), cumsum(xo, axis));
    }
    CLOSE(sum(x), sum(xo));
    SAME_BITS(max(x), max(xo));
    CLOSE(mean(x), mean(xo));
    Tensor<std::int32_t> all = argmax(x), allo = argmax(xo);
    CHECK(all.to_host() == allo.to_host());
    auto scale = draw(Shape{c.shape[1]}, NamedSharding(c.mesh, P()), 5);
    auto bias = draw(Shape{c.shape[1]}, NamedSharding(c.mesh, P()), 6);
    CLOSE(layer_norm(x, scale, bias), layer_norm(xo, whole(scale), whole(bias)));
  }
}

TEST_CASE("dots with uneven free and contracting dimensions: missing elements add nothing", "[expr][uneven][dot]") {
  for (auto const& c : uneven_cases()) {
    NamedSharding s(c.mesh, c.spec);
    INFO(to_string(s) << " shape " << to_string(c.shape));
    auto x = draw(c.shape, s, 7), y = draw(c.shape, s, 8);
    auto xo = whole(x), yo = whole(y);
    // Contracting the columns (split in the column cases) and the rows.
    CLOSE(matmul(x, transpose(y)), matmul(xo, transpose(yo)));
    CLOSE(matmul(transpose(x), y), matmul(transpose(xo), yo));
    CLOSE(matmul(x, transpose(y)) + 1.0f, matmul(xo, transpose(yo)) + 1.0f);
  }
}

TEST_CASE("take from an uneven table: each device looks up its real rows", "[expr][uneven][take]") {
  for (auto const& c : uneven_cases()) {
    NamedSharding s(c.mesh, c.spec);
    INFO(to_string(s) << " shape " << to_string(c.shape));
    auto table = draw(c.shape, s, 9);
    std::int64_t const n = c.shape[0];
    std::vector<std::int32_t> ids;
    for (std::int64_t i = -n; i < n + 2; ++i) ids.push_back(static_cast<std::int32_t>(i));  // negatives, and 2 past the end
    auto shape = Shape{static_cast<std::int64_t>(ids.size())};
    for (auto const& is : {NamedSharding(c.mesh, P()), NamedSharding(c.mesh, c.spec.size() ? P(c.spec[0]) : P())}) {
      INFO("indices " << to_string(is.spec()));
      auto indices = device_put(ids, shape, is);
      SAME_BITS(take(table, indices), take(whole(table), device_put(ids, shape)));
    }
  }
}

TEST_CASE("reshards between uneven shardings, and constraints to them, keep every bit", "[expr][uneven][reshard]") {
  for (auto const& mesh : test::all_meshes()) {
    auto k = static_cast<std::int64_t>(mesh.num_devices());
    for (Shape shape : {Shape{k + 1, 3}, Shape{2, 2 * k - 1}, Shape{1, 5}}) {
      auto data = test::iota_data<float>(shape);
      auto specs = test::all_specs(mesh.axes(), 2);
      for (auto const& from : specs) {
        auto x = device_put(data, shape, NamedSharding(mesh, from));
        for (auto const& to : specs) {
          NamedSharding target(mesh, to);
          INFO(to_string(mesh) << " " << to_string(shape) << " " << to_string(from) << " -> " << to_string(to));
          auto y = device_put(x, target);
          REQUIRE(y.sharding() == target);
          REQUIRE(test::shards_match(y, data));
          auto z = eval(with_sharding_constraint(x * 2.0f, target) + 1.0f);
          REQUIRE(test::bitwise_equal(z.to_host(), eval(device_put(data, shape) * 2.0f + 1.0f).to_host()));
        }
      }
    }
  }
}

TEST_CASE("GPT-2's vocabulary (50257) as a vocabulary-parallel embedding and logits GEMM on a (2, 4) mesh",
          "[expr][uneven][gpt2]") {
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  std::int64_t const vocab = 50257, model = 64, batch = 4, seq = 16;
  // The embedding table split over its vocabulary: 12565 rows per 'mp' device, the last 12562.
  auto wte = draw(Shape{vocab, model}, NamedSharding(mesh, P("mp", None)), 10);
  std::vector<std::int32_t> ids;
  for (std::int64_t i = 0; i < batch * seq; ++i) ids.push_back(static_cast<std::int32_t>((i * 7919 + 13) % vocab));
  ids.back() = static_cast<std::int32_t>(vocab - 1);  // the last device's last row
  auto tokens = device_put(ids, Shape{batch, seq}, NamedSharding(mesh, P("dp")));
  auto h = eval(take(wte, tokens));
  CHECK(h.shape() == Shape{batch, seq, model});
  auto wte_one = whole(wte);
  auto h_one = eval(take(wte_one, device_put(ids, Shape{batch, seq})));
  CHECK(test::bitwise_equal(h.to_host(), h_one.to_host()));
  // The logits GEMM against the same table, vocabulary-parallel: no gather of the table or of the
  // activations, the result split over the vocabulary like the table.
  DotDims const logits_dims{{2}, {1}, {}, {}};
  auto logits_expr = dot_general(h, wte, logits_dims);
  auto const& plan = plan_of(logits_expr);
  CHECK(plan.count(plan::Collective::all_gather) == 0);
  CHECK(plan.count(plan::Collective::all_reduce) == 0);
  Tensor<float> logits = logits_expr;
  CHECK(logits.sharding() == NamedSharding(mesh, P("dp", None, "mp")));
  Tensor<float> logits_one = dot_general(h_one, wte_one, logits_dims);
  auto got = logits.to_host(), want = logits_one.to_host();
  REQUIRE(got.size() == want.size());
  float worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]) / (1.0f + std::abs(want[i])));
  CHECK(worst <= 1e-5f);
  // A softmax's normalizer over the uneven vocabulary, across the all-reduce.
  require_close(Tensor<float>(logsumexp(logits, -1)).to_host(), Tensor<float>(logsumexp(logits_one, -1)).to_host());
}

TEST_CASE("jit with uneven in_shardings and out_shardings equals one device", "[expr][uneven][jit]") {
  for (auto const& mesh : test::all_meshes()) {
    auto k = static_cast<std::int64_t>(mesh.num_devices());
    Shape xs{k + 1, 2 * k - 1}, ws{2 * k - 1, 3};
    auto x = draw(xs, NamedSharding(mesh, P()), 20), w = draw(ws, NamedSharding(mesh, P()), 21);
    auto f = [](auto const& a, auto const& b) { return softmax(matmul(tanh(a), b), -1); };
    Tensor<float> want = f(whole(x), whole(w));
    auto specs = test::all_specs(mesh.axes(), 2);
    for (std::size_t i = 0; i < specs.size(); i += 3) {
      NamedSharding sx(mesh, specs[i]), sw(mesh, specs[(i + 1) % specs.size()]), so(mesh, specs[(i + 2) % specs.size()]);
      INFO(to_string(mesh) << " x " << to_string(sx.spec()) << " w " << to_string(sw.spec()) << " out "
                           << to_string(so.spec()));
      auto jitted = jit(f, {sx, sw}, so);
      Tensor<float> y = jitted(x, w);
      REQUIRE(y.sharding() == so);
      for (auto const& shard : y.addressable_shards()) REQUIRE(shard.shape == shard.index.extent());
      require_close(y.to_host(), want.to_host());
    }
  }
}
