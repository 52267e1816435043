// Property test: random expression trees (depth up to 8: elementwise ops, broadcasting,
// reductions), over random meshes and shardings, equal the same trees evaluated on one device,
// and hold on each device what their plan's memory analysis says.
// Trees are drawn at compile time (each tree is its own expression type, as user code would be);
// meshes and shardings are drawn at run time.
#include <catch2/catch_test_macros.hpp>

#include <cmath>
#include <random>
#include <utility>

#include "support/data.hpp"
#include "support/memory.hpp"
#include "support/meshes.hpp"

using namespace tessel;

namespace {

constexpr std::uint32_t mix(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

struct Leaves {
  Tensor<float> a, b;  // (rows, cols)
  Tensor<float> row;   // (1, cols): broadcasts down the rows
  Tensor<float> col;   // (rows, 1): broadcasts across the columns
};

// Values stay bounded (tanh before exp, scaled sums) so no tree overflows.
template <std::uint32_t Seed, int Depth>
auto tree(Leaves const& l) {
  constexpr std::uint32_t r = mix(Seed);
  constexpr std::uint32_t s1 = mix(Seed ^ 0x9e3779b9U), s2 = mix(Seed + 0x632be5abU);
  if constexpr (Depth == 0 || r % 9 == 0) {
    if constexpr (r % 4 == 0) return as_node(l.a);
    else if constexpr (r % 4 == 1) return as_node(l.b);
    else if constexpr (r % 4 == 2) return as_node(l.row);
    else return as_node(l.col);
  } else {
    auto x = tree<s1, Depth - 1>(l);
    constexpr int op = (r >> 4) % 14;
    if constexpr (op == 0) return -x;
    else if constexpr (op == 1) return tanh(x);
    else if constexpr (op == 2) return exp(tanh(x));
    else if constexpr (op == 3) return relu(x) * 0.5f;
    else if constexpr (op == 4) return sigmoid(x) + abs(x);
    else if constexpr (op == 5) return sin(x) - 1;
    else if constexpr (op == 6) return x + tree<s2, Depth - 1>(l);
    else if constexpr (op == 7) return x * tree<s2, Depth - 1>(l);
    else if constexpr (op == 8) return maximum(x, tree<s2, Depth - 1>(l));
    else if constexpr (op == 9) {
      auto y = tree<s2, Depth - 1>(l);
      return where(x > y, x, y * 0.25f);
    } else if constexpr (op == 10) return sum(tanh(x), 1, true) * 0.1f;
    else if constexpr (op == 11) return max(x, 0, true);
    else if constexpr (op == 12) return mean(x, {0, 1}, true) + x;
    else return with_sharding_constraint(x + l.a * 0.0f, l.a.sharding()) - 0.5f;  // broadcast to a's shape first
  }
}

template <class E>
constexpr bool has_reduction() {
  if constexpr (E::kind == NodeKind::reduce) return true;
  else if constexpr (E::kind == NodeKind::elementwise)
    return []<class... C>(std::tuple<C...>*) { return (has_reduction<C>() || ...); }(
        static_cast<decltype(E::children)*>(nullptr));
  else if constexpr (E::kind == NodeKind::constraint) return has_reduction<detail::child_t<0, E>>();
  else return false;
}

// Any spec of the shape's rank: uneven splits included (a size-1 dimension split k ways lives on
// the first device of each group).
NamedSharding random_sharding(std::mt19937& rng, Mesh const& mesh, Shape const& shape) {
  auto specs = test::all_specs(mesh.axes(), shape.rank());
  return NamedSharding(mesh, specs[rng() % specs.size()]);
}

template <std::uint32_t Seed>
void check_tree(std::mt19937& rng, std::int64_t rows, std::int64_t cols) {
  auto meshes = test::all_meshes();
  Mesh const& mesh = meshes[rng() % meshes.size()];
  auto key = random::fold_in(PRNGKey(2024), Seed);
  auto draw = [&](Shape const& shape, std::uint32_t k) {
    return random::normal(random::fold_in(key, k), shape, random_sharding(rng, mesh, shape));
  };
  Leaves sharded{draw({rows, cols}, 0), draw({rows, cols}, 1), draw({1, cols}, 2), draw({rows, 1}, 3)};
  auto whole = [](Tensor<float> const& t) { return device_put(t.to_host(), t.shape()); };
  Leaves single{whole(sharded.a), whole(sharded.b), whole(sharded.row), whole(sharded.col)};

  auto e = tree<Seed, 8>(sharded);
  using E = decltype(e);
  INFO("tree " << Seed << " on " << to_string(mesh) << ", leaves " << rows << "x" << cols << ":\n" << explain(e));
  std::vector<float> got;
  if constexpr (E::kind == NodeKind::tensor) {
    got = e.data.tensor.to_host();
  } else {
    // What the run holds on each device is what the memory analysis says.
    test::check_memory_against_measured(memory_analysis(e), [&] { return eval(e); });
    got = eval(e).to_host();
  }
  auto r = tree<Seed, 8>(single);
  std::vector<float> want;
  if constexpr (E::kind == NodeKind::tensor) want = r.data.tensor.to_host();
  else want = eval(r).to_host();
  REQUIRE(got.size() == want.size());
  if constexpr (!has_reduction<E>()) {
    // Same ops in the same order on every element: bitwise equal.
    REQUIRE(test::bitwise_equal(got, want));
  } else {
    // Reductions combine partial results in another order: equal within float32 rounding.
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("element " << i << ": " << got[i] << " vs " << want[i]);
      REQUIRE(std::abs(got[i] - want[i]) <= 2e-5f * (1.0f + std::abs(want[i])));
    }
  }
}

}  // namespace

TEST_CASE("random expression trees equal their one-device evaluation", "[expr][property]") {
  std::mt19937 rng(12345);
  // (24, 48) divides over every test mesh; (23, 47) over none (uneven blocks, some empty).
  for (int round = 0; round < 4; ++round) {
    std::int64_t const rows = round < 3 ? 24 : 23, cols = round < 3 ? 48 : 47;
    [&]<int... K>(std::integer_sequence<int, K...>) {  // tree shapes 1 .. 12, in order
      (check_tree<K + 1>(rng, rows, cols), ...);
    }(std::make_integer_sequence<int, 12>{});
  }
}
