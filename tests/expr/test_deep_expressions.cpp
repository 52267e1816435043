// Deep expressions (issue 8): a left-deep chain of 200 ops, a right-deep one, a balanced tree and
// reductions / softmax over a deep chain compile with the compiler's default limits
// (-ftemplate-depth=900) and give, sharded, what they give on one device.
//
// The chains are built with fold expressions, so the test's own helpers add no template
// instantiation depth: every level of nesting in these types is the library's.
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <utility>

#include "support/data.hpp"
#include "support/meshes.hpp"

using namespace tessel;

#ifndef TESSEL_DEEP_LENGTH
#define TESSEL_DEEP_LENGTH 200
#endif

namespace {

constexpr int length = TESSEL_DEEP_LENGTH;

struct Leaves {
  Tensor<float> x;  // (16, 64)
  Tensor<float> y;  // (1, 64): broadcast down the rows
};

// One link of a chain: link K applies op K % 5, with a tensor, a scalar or nothing (tanh). Values
// stay bounded whatever the length.
template <int K>
struct Link {
  Leaves const* l;
};

// Left-deep: (e op leaf).
template <class E, int K>
  requires Expression<E>
auto operator|(E const& e, Link<K> k) {
  if constexpr (K % 5 == 0) return e * 0.75f;
  else if constexpr (K % 5 == 1) return e + k.l->y;
  else if constexpr (K % 5 == 2) return maximum(e, k.l->x);
  else if constexpr (K % 5 == 3) return tanh(e);
  else return e - 0.5;
}

// Right-deep: (leaf op e).
template <int K, class E>
  requires Expression<E>
auto operator|(Link<K> k, E const& e) {
  if constexpr (K % 5 == 0) return 0.75f * e;
  else if constexpr (K % 5 == 1) return k.l->y + e;
  else if constexpr (K % 5 == 2) return maximum(k.l->x, e);
  else if constexpr (K % 5 == 3) return tanh(e);
  else return 0.5 - e;
}

template <int... K>
auto left_chain(Leaves const& l, std::integer_sequence<int, K...>) {
  return (as_node(l.x) | ... | Link<K>{&l});
}
template <int... K>
auto right_chain(Leaves const& l, std::integer_sequence<int, K...>) {
  return (Link<K>{&l} | ... | as_node(l.x));
}

auto left_deep(Leaves const& l) { return left_chain(l, std::make_integer_sequence<int, length>{}); }
auto right_deep(Leaves const& l) { return right_chain(l, std::make_integer_sequence<int, length>{}); }

// A balanced tree with 2^Depth leaves, every subtree a different type.
template <int Depth, unsigned Seed>
auto balanced(Leaves const& l) {
  if constexpr (Depth == 0) {
    if constexpr (Seed % 3 == 0) return as_node(l.y);
    else return as_node(l.x);
  } else {
    auto a = balanced<Depth - 1, Seed * 2>(l);
    auto b = balanced<Depth - 1, Seed * 2 + 1>(l);
    if constexpr (Seed % 3 == 0) return a + b * 0.5f;
    else if constexpr (Seed % 3 == 1) return maximum(a, b) - 0.25f;
    else return tanh(a - b);
  }
}

using LeftDeep = decltype(left_deep(std::declval<Leaves const&>()));
using RightDeep = decltype(right_deep(std::declval<Leaves const&>()));
using Balanced = decltype(balanced<7, 1>(std::declval<Leaves const&>()));

// 200 links: 40 of each op; four of every five add a leaf.
static_assert(node_count<LeftDeep>::value == 1 + length + length * 4 / 5);
static_assert(node_count<RightDeep>::value == node_count<LeftDeep>::value);
static_assert(expression_depth<LeftDeep>::value == length + 1);
static_assert(expression_depth<RightDeep>::value == length + 1);
static_assert(node_count<Balanced>::value >= 255);

Leaves put(Shape const& x_shape, NamedSharding const& xs, NamedSharding const& ys) {
  auto key = random::fold_in(PRNGKey(8), 8);
  return {random::normal(random::fold_in(key, 0), x_shape, xs), random::normal(random::fold_in(key, 1), {1, x_shape[1]}, ys)};
}

// The same leaves on one device.
Leaves whole(Leaves const& l) {
  return {device_put(l.x.to_host(), l.x.shape()), device_put(l.y.to_host(), l.y.shape())};
}

struct Case {
  Mesh mesh;
  PartitionSpec x_spec, y_spec;
};

std::vector<Case> cases() {
  return {
      {make_mesh({8}, {"x"}), P("x"), P()},
      {make_mesh({2, 4}, {"a", "b"}), P("a", "b"), P(None, "b")},
      {make_mesh({2, 2, 2}, {"a", "b", "c"}), P({"a", "b"}, "c"), P(None, "c")},
  };
}

void require_close(std::vector<float> const& got, std::vector<float> const& want, float tol) {
  REQUIRE(got.size() == want.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i << ": " << got[i] << " vs " << want[i]);
    REQUIRE(std::abs(got[i] - want[i]) <= tol * (1.0f + std::abs(want[i])));
  }
}

}  // namespace

TEST_CASE("a 200-op left-deep chain is one fused kernel and bitwise the one-device result", "[expr][deep]") {
  for (auto const& c : cases()) {
    INFO(c.mesh.axes().size(0) << " devices on the first of " << c.mesh.num_axes() << " mesh axes");
    auto l = put({16, 64}, NamedSharding(c.mesh, c.x_spec), NamedSharding(c.mesh, c.y_spec));
    auto e = left_deep(l);
    CHECK(plan_of(e).count(plan::StepKind::kernel) == 1);
    Tensor<float> out = e;
    CHECK(out.sharding() == l.x.sharding());
    Tensor<float> ref = left_deep(whole(l));
    CHECK(test::bitwise_equal(out.to_host(), ref.to_host()));
    // The cached plan serves the second evaluation.
    auto plans = plan::cached_plans();
    Tensor<float> again = left_deep(l);
    CHECK(plan::cached_plans() == plans);
    CHECK(test::bitwise_equal(again.to_host(), ref.to_host()));
  }
}

TEST_CASE("a 200-op right-deep chain and a balanced 255-node tree equal the one-device result", "[expr][deep]") {
  for (auto const& c : cases()) {
    auto l = put({16, 64}, NamedSharding(c.mesh, c.x_spec), NamedSharding(c.mesh, c.y_spec));
    Tensor<float> right = right_deep(l);
    Tensor<float> right_ref = right_deep(whole(l));
    CHECK(test::bitwise_equal(right.to_host(), right_ref.to_host()));
    Tensor<float> tree = balanced<7, 1>(l);
    Tensor<float> tree_ref = balanced<7, 1>(whole(l));
    CHECK(test::bitwise_equal(tree.to_host(), tree_ref.to_host()));
  }
}

TEST_CASE("reductions and softmax over a 200-op chain equal the one-device result", "[expr][deep][reduce]") {
  for (auto const& c : cases()) {
    auto l = put({16, 64}, NamedSharding(c.mesh, c.x_spec), NamedSharding(c.mesh, c.y_spec));
    auto w = whole(l);
    Tensor<float> rows = sum(left_deep(l), 1);
    Tensor<float> rows_ref = sum(left_deep(w), 1);
    require_close(rows.to_host(), rows_ref.to_host(), 1e-5f);
    Tensor<float> soft = softmax(left_deep(l));
    Tensor<float> soft_ref = softmax(left_deep(w));
    require_close(soft.to_host(), soft_ref.to_host(), 1e-5f);
    // Rows whole on each device: the softmax is one kernel that computes the chain once per
    // element (the row cache), bitwise as on one device.
    auto rows_only = put({16, 64}, NamedSharding(c.mesh, P(c.mesh.axes().name(0).view())), NamedSharding(c.mesh, P()));
    auto before = execution_counts();
    Tensor<float> soft_rows = softmax(left_deep(rows_only));
    CHECK(execution_counts().kernels == before.kernels + 1);
    CHECK(execution_counts().row_cached_kernels == before.row_cached_kernels + (tessel::backend::caches_rows ? 1 : 0));
    CHECK(test::bitwise_equal(soft_rows.to_host(), Tensor<float>(softmax(left_deep(whole(rows_only)))).to_host()));
  }
}
