// matmul's and dot_general's shape rules against JAX: every pair of shapes (and dimension numbers)
// JAX refuses is refused with a tessel::Error; every one it accepts gives JAX's result shape, or,
// for the matmul broadcasts tessel does not do yet, a refusal that says so. Accepted dot_generals
// are also computed, on one device and sharded, against a host loop.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <sstream>

#include "semantics/vectors.hpp"
#include "support/data.hpp"

using namespace tessel;
using namespace tessel::test;
using Catch::Matchers::ContainsSubstring;

namespace {

// "(8,2)" / "(5,)" / "()" and "[0,2]" / "[]": the numbers between the brackets.
std::vector<std::int64_t> numbers(std::string const& text) {
  std::vector<std::int64_t> out;
  std::string t = text.substr(1, text.size() - 2);
  std::stringstream ss(t);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty()) out.push_back(std::stoll(item));
  return out;
}

Shape shape_of(std::string const& text) {
  Shape s;
  for (auto d : numbers(text)) s.push_back(d);
  return s;
}

FixedVector<std::uint8_t, max_rank> dims_of(std::string const& text) {
  FixedVector<std::uint8_t, max_rank> d;
  for (auto v : numbers(text)) d.push_back(static_cast<std::uint8_t>(v));  // -1 becomes 255: out of range too
  return d;
}

Tensor<float> small_values(Shape const& shape, NamedSharding const& s, int seed) {
  std::vector<float> v(static_cast<std::size_t>(shape.num_elements()));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(static_cast<int>((i * 7 + static_cast<std::size_t>(seed)) % 9) - 4);
  return device_put(v, shape, s);
}

std::int64_t flat_index(Shape const& shape, std::vector<std::int64_t> const& idx) {
  std::int64_t f = 0;
  for (std::size_t d = 0; d < shape.size(); ++d) f = f * shape[d] + idx[d];
  return f;
}

// lax.dot_general by definition: result dims are batch, lhs free, rhs free.
std::vector<float> host_dot(std::vector<float> const& l, Shape const& ls, std::vector<float> const& r, Shape const& rs,
                            DotDims const& dd, Shape const& out) {
  auto in = [](auto const& list, std::size_t d) { return std::find(list.begin(), list.end(), d) != list.end(); };
  std::vector<std::size_t> lfree, rfree;
  for (std::size_t d = 0; d < ls.size(); ++d) if (!in(dd.lhs_batch, d) && !in(dd.lhs_contract, d)) lfree.push_back(d);
  for (std::size_t d = 0; d < rs.size(); ++d) if (!in(dd.rhs_batch, d) && !in(dd.rhs_contract, d)) rfree.push_back(d);
  std::vector<float> result(static_cast<std::size_t>(out.num_elements()));
  std::int64_t contractions = 1;
  for (auto d : dd.lhs_contract) contractions *= ls[d];
  for (std::int64_t o = 0; o < out.num_elements(); ++o) {
    std::vector<std::int64_t> oi(out.size());
    for (std::int64_t rest = o, d = static_cast<std::int64_t>(out.size()); d-- > 0;) oi[static_cast<std::size_t>(d)] = rest % out[static_cast<std::size_t>(d)], rest /= out[static_cast<std::size_t>(d)];
    std::vector<std::int64_t> li(ls.size()), ri(rs.size());
    std::size_t k = 0;
    for (std::size_t b = 0; b < dd.lhs_batch.size(); ++b, ++k) li[dd.lhs_batch[b]] = ri[dd.rhs_batch[b]] = oi[k];
    for (auto d : lfree) li[d] = oi[k++];
    for (auto d : rfree) ri[d] = oi[k++];
    double acc = 0;
    for (std::int64_t c = 0; c < contractions; ++c) {
      std::int64_t rest = c;
      for (std::size_t j = dd.lhs_contract.size(); j-- > 0;) {
        std::int64_t n = ls[dd.lhs_contract[j]];
        li[dd.lhs_contract[j]] = ri[dd.rhs_contract[j]] = rest % n;
        rest /= n;
      }
      acc += static_cast<double>(l[static_cast<std::size_t>(flat_index(ls, li))]) * r[static_cast<std::size_t>(flat_index(rs, ri))];
    }
    result[static_cast<std::size_t>(o)] = static_cast<float>(acc);
  }
  return result;
}

// The first dimension sharded over a 2x4 mesh's 'b' axis when it divides, else replicated.
NamedSharding first_dim_over_b(Mesh const& mesh, Shape const& shape) {
  if (!shape.empty() && shape[0] % 4 == 0) return NamedSharding(mesh, P("b"));
  return NamedSharding(mesh, P());
}

}  // namespace

TEST_CASE("matmul accepts and refuses the shapes jnp.matmul does", "[semantics][shape]") {
  ReferenceTokens in("jax_semantics", "shapes.txt");
  auto one = detail::single_device_sharding();
  int same = 0, refused_unsupported = 0, refused_like_jax = 0;
  while (!in.done()) {
    std::string kind = in.word();
    if (kind != "matmul") {
      for (int i = 0; i < 7; ++i) in.word();  // a dot_general line
      continue;
    }
    Shape a = shape_of(in.word()), b = shape_of(in.word());
    std::string want = in.word();
    INFO("matmul " << to_string(a) << " @ " << to_string(b) << ", JAX: " << want);
    auto ta = small_values(a, one, 1), tb = small_values(b, one, 2);
    if (want == "error") {
      REQUIRE_THROWS_AS(matmul(ta, tb), Error);
      ++refused_like_jax;
      continue;
    }
    try {
      auto e = matmul(ta, tb);
      REQUIRE(e.shape() == shape_of(want));
      ++same;
    } catch (Error const& err) {
      REQUIRE_THAT(err.what(), ContainsSubstring("tessel supports a 1-D operand, a 2-D right operand, or equal batch"));
      ++refused_unsupported;
      UNSCOPED_INFO("refused: " << to_string(a) << " @ " << to_string(b));
    }
  }
  INFO(same << " as JAX, " << refused_unsupported << " refused as unsupported, " << refused_like_jax << " refused as JAX does");
  CHECK(same >= 22);  // 1-D operands, 2-D right operands, equal batch dimensions
  CHECK(refused_unsupported <= 11);
  CHECK(refused_like_jax == 18);
}

TEST_CASE("dot_general validates dimension numbers as jax.lax.dot_general does and computes what it accepts",
          "[semantics][shape][dot]") {
  ReferenceTokens in("jax_semantics", "shapes.txt");
  auto one = detail::single_device_sharding();
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  int accepted = 0, refused = 0;
  while (!in.done()) {
    std::string kind = in.word();
    if (kind == "matmul") {
      for (int i = 0; i < 3; ++i) in.word();
      continue;
    }
    Shape a = shape_of(in.word()), b = shape_of(in.word());
    DotDims dd;
    dd.lhs_contract = dims_of(in.word());
    dd.rhs_contract = dims_of(in.word());
    dd.lhs_batch = dims_of(in.word());
    dd.rhs_batch = dims_of(in.word());
    std::string want = in.word();
    INFO("dot_general " << to_string(a) << " " << to_string(b) << ", JAX: " << want);
    auto ta = small_values(a, one, 1), tb = small_values(b, one, 2);
    if (want == "error") {
      REQUIRE_THROWS_AS(dot_general(ta, tb, dd), Error);
      ++refused;
      continue;
    }
    Shape out = shape_of(want);
    REQUIRE(dot_general(ta, tb, dd).shape() == out);
    ++accepted;
    auto expected = host_dot(ta.to_host(), a, tb.to_host(), b, dd, out);
    // Small integers: every order of summation gives the same floats.
    REQUIRE(Tensor<float>(dot_general(ta, tb, dd)).to_host() == expected);
    auto sa = small_values(a, first_dim_over_b(mesh, a), 1), sb = small_values(b, first_dim_over_b(mesh, b), 2);
    REQUIRE(Tensor<float>(dot_general(sa, sb, dd)).to_host() == expected);
  }
  CHECK(accepted >= 30);
  CHECK(refused >= 20);
}

TEST_CASE("dot_general's messages name the dimensions at fault", "[semantics][shape][dot][error]") {
  auto one = detail::single_device_sharding();
  auto a = small_values({2, 3, 4}, one, 1), b = small_values({2, 4, 5}, one, 2);
  CHECK_THROWS_WITH(dot_general(a, b, DotDims{{2}, {1}, {2}, {0}}),
                    "dot_general requires lhs batch dimensions (2,) and lhs contracting dimensions (2,) to be disjoint; "
                    "dimension 2 is in both");
  CHECK_THROWS_WITH(dot_general(a, b, DotDims{{2, 2}, {1, 1}, {}, {}}),
                    "dot_general requires lhs contracting dimensions (2, 2) to be distinct; dimension 2 appears twice");
  CHECK_THROWS_WITH(dot_general(a, b, DotDims{{2}, {1}, {0}, {}}),
                    "dot_general requires equal numbers of lhs and rhs batch dimensions, got lhs (0,) and rhs ()");
  CHECK_THROWS_WITH(dot_general(a, b, DotDims{{2}, {1}, {0}, {3}}),
                    "dot_general: rhs batch dimension 3 is out of range for shape (2, 4, 5) (rank 3)");
  CHECK_THROWS_WITH(matmul(small_values({8, 2}, one, 1), small_values({2, 2, 6}, one, 2)),
                    ContainsSubstring("matmul of shapes (8, 2) and (2, 2, 6) broadcasts batch dimensions"));
  CHECK_THROWS_WITH(matmul(small_values({2, 4, 5}, one, 1), small_values({3, 5, 6}, one, 2)),
                    "matmul: batch dimensions of shapes (2, 4, 5) and (3, 5, 6) do not broadcast: sizes 2 and 3");
  CHECK_THROWS_WITH(matmul(small_values({5}, one, 1), small_values({}, one, 2)),
                    "matmul: operands must have rank at least 1, got shapes (5,) and () (use multiply for scalars)");
}
