// The ops decoder models need, against JAX's vectors (tests/data/jax_ops/decoder_ops.txt, made by
// make_decoder_vectors.py) and sharded against unsharded, bit for bit, on every test mesh:
// lax.dynamic_slice / dynamic_update_slice with run-time starts (C++ integers and 0-d int32 /
// int64 tensors, negative and past-the-end ones as JAX treats them), jnp.repeat / tile /
// broadcast_to, `==` / `!=` on arrays, concatenate of mixed dtypes, take with int64 indices,
// lax.top_k.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "support/data.hpp"
#include "support/jax_tensors.hpp"
#include "support/meshes.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using Catch::Matchers::ContainsSubstring;

namespace {

NamedSharding one_device() { return NamedSharding(make_mesh({1}, {"x"}, {0}), P()); }

std::map<std::string, test::JaxTensor> const& vectors() {
  static auto const v = test::read_jax_tensors("decoder_ops.txt");
  return v;
}
test::JaxTensor const& at(std::string const& key) { return vectors().at(key); }

Tensor<float> put(test::JaxTensor const& t, NamedSharding const& s) { return device_put(t.as<float>(), t.shape, s); }

template <class I = std::int32_t>
Tensor<I> index(std::int64_t value, NamedSharding const& s) {
  return device_put(std::vector<I>{static_cast<I>(value)}, Shape{}, s);
}

// A few shardings of a rank-3 or rank-4 operand (every one would be thousands): batch, heads,
// positions and two at once, on the mesh's first axes.
std::vector<NamedSharding> some_shardings(Mesh const& mesh, Shape const& shape) {
  AxisName const a = mesh.axes().name(0);
  std::vector<PartitionSpec> specs{P(), P(a), P(None, a), P(None, None, a)};
  if (mesh.axes().num_axes() > 1) {
    AxisName const b = mesh.axes().name(1);
    specs.push_back(P(a, b));
    specs.push_back(P(None, b, a));
  }
  return test::tilings(mesh, shape, specs);
}

}  // namespace

TEST_CASE("dynamic_slice matches lax.dynamic_slice, starts wrapped and clamped as JAX does", "[expr][dynamic_slice]") {
  for (std::string c : {"dslice_in", "dslice_negative", "dslice_very_negative", "dslice_past_end", "dslice_whole",
                        "dslice_4d", "dslice_4d_clamped"}) {
    INFO(c);
    auto const& x = at(c + " x");
    auto start = at(c + " start").as<std::int64_t>();
    auto sizes = at(c + " sizes").as<std::int64_t>();
    Shape box;
    for (auto n : sizes) box.push_back(n);
    auto want = at(c + " out").as<float>();
    auto slice_of = [&](auto const& operand, NamedSharding const& starts_on, bool tensors) -> Tensor<float> {
      if (x.shape.size() == 2) {
        if (tensors) return eval(lax::dynamic_slice(operand, std::tuple{index(start[0], starts_on), index<std::int64_t>(start[1], starts_on)}, box));
        return eval(lax::dynamic_slice(operand, std::tuple{start[0], start[1]}, box));
      }
      if (tensors)
        return eval(lax::dynamic_slice(operand, std::tuple{index(start[0], starts_on), start[1], index(start[2], starts_on), start[3]}, box));
      return eval(lax::dynamic_slice(operand, std::tuple{start[0], start[1], start[2], start[3]}, box));
    };
    auto whole = slice_of(put(x, one_device()), one_device(), false);
    CHECK(whole.shape() == Shape(at(c + " out").shape));
    CHECK(test::bitwise_equal(whole.to_host(), want));
    for (auto const& mesh : test::all_meshes()) {
      auto shardings = x.shape.size() == 2 ? test::shardings_of(mesh, x.shape) : some_shardings(mesh, x.shape);
      for (auto const& s : shardings) {
        INFO(to_string(mesh) << " operand " << to_string(s.spec()));
        CHECK(test::bitwise_equal(slice_of(put(x, s), one_device(), false).to_host(), want));
        // Starts as 0-d tensors: on the operand's devices, or on one device (moved over).
        CHECK(test::bitwise_equal(slice_of(exp(put(x, s)) - 1.0f, NamedSharding(mesh, P()), true).to_host(),
                                  eval(exp(put(at(c + " out"), one_device())) - 1.0f).to_host()));
        CHECK(test::bitwise_equal(slice_of(put(x, s), one_device(), true).to_host(), want));
      }
    }
  }
  auto const& x3 = at("dslice_in_dim x");
  for (std::string c : {"dslice_in_dim", "dslice_in_dim_clamped"}) {
    INFO(c);
    auto start = at(c + " start").as<std::int32_t>()[0];
    auto want = at(c + " out").as<float>();
    for (auto const& mesh : test::all_meshes())
      for (auto const& s : test::shardings_of(mesh, x3.shape)) {
        INFO(to_string(mesh) << " operand " << to_string(s.spec()));
        CHECK(test::bitwise_equal(eval(lax::dynamic_slice_in_dim(put(x3, s), start, 3, 1)).to_host(), want));
      }
  }
}

TEST_CASE("dynamic_update_slice matches lax.dynamic_update_slice on every sharding of the operand",
          "[expr][dynamic_slice][dynamic_update_slice]") {
  for (std::string c : {"dus_in", "dus_negative", "dus_past_end", "dus_cache_token", "dus_cache_clamped",
                        "dus_cache_block"}) {
    INFO(c);
    auto const& x = at(c + " x");
    auto const& u = at(c + " update");
    auto start = at(c + " start").as<std::int64_t>();
    auto want = at(c + " out").as<float>();
    auto update = [&](Tensor<float> const& operand, Tensor<float> const& upd, NamedSharding const& starts_on,
                      bool tensors) -> Tensor<float> {
      if (x.shape.size() == 2) {
        if (tensors) return eval(lax::dynamic_update_slice(operand, upd, std::tuple{index(start[0], starts_on), index(start[1], starts_on)}));
        return eval(lax::dynamic_update_slice(operand, upd, std::tuple{start[0], start[1]}));
      }
      if (tensors)
        return eval(lax::dynamic_update_slice(operand, upd, std::tuple{0, 0, index<std::int64_t>(start[2], starts_on), 0}));
      return eval(lax::dynamic_update_slice(operand, upd, std::tuple{start[0], start[1], start[2], start[3]}));
    };
    CHECK(test::bitwise_equal(update(put(x, one_device()), put(u, one_device()), one_device(), false).to_host(), want));
    for (auto const& mesh : test::all_meshes()) {
      auto shardings = x.shape.size() == 2 ? test::shardings_of(mesh, x.shape) : some_shardings(mesh, x.shape);
      for (auto const& s : shardings) {
        // The update in the operand's sharding where it tiles, else replicated (the planner reshards it).
        NamedSharding us = s;
        try {
          us.check_shape(u.shape);
        } catch (Error const&) {
          us = NamedSharding(mesh, P());
        }
        INFO(to_string(mesh) << " operand " << to_string(s.spec()) << " update " << to_string(us.spec()));
        auto operand = put(x, s);
        auto before = operand.to_host();
        auto got = update(operand, put(u, us), NamedSharding(mesh, P()), true);
        CHECK(got.sharding() == s);
        CHECK(test::bitwise_equal(got.to_host(), want));
        CHECK(test::bitwise_equal(update(operand, put(u, us), one_device(), false).to_host(), want));
        CHECK(test::bitwise_equal(operand.to_host(), before));  // the operand is a value: unchanged
      }
    }
  }
  auto const& cache = at("dus_in_dim x");
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  auto got = eval(lax::dynamic_update_slice_in_dim(put(cache, NamedSharding(mesh, P("dp", "mp"))),
                                                   put(at("dus_in_dim update"), NamedSharding(mesh, P("dp", "mp"))),
                                                   index(3, NamedSharding(mesh, P())), 2));
  CHECK(test::bitwise_equal(got.to_host(), at("dus_in_dim out").as<float>()));
}

TEST_CASE("a KV cache sharded over heads takes a token with no collective, and one plan serves every position",
          "[expr][dynamic_slice][plan]") {
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  NamedSharding heads(mesh, P("dp", "mp")), scalar(mesh, P());
  auto const& c = at("dus_cache_token x");
  auto cache = put(c, heads);
  auto token = put(at("dus_cache_token update"), heads);
  auto pos = index(5, scalar);
  auto const& p = plan_of(lax::dynamic_update_slice_in_dim(cache, token, pos, 2));
  INFO(explain(lax::dynamic_update_slice_in_dim(cache, token, pos, 2)));
  for (auto k : plan::all_collectives) CHECK(p.count(k) == 0);
  // Reading the cache back along positions (a decode step's keys up to the position) keeps heads split.
  auto const& r = plan_of(lax::dynamic_slice_in_dim(cache, pos, 4, 2));
  for (auto k : plan::all_collectives) CHECK(r.count(k) == 0);

  // Every position runs the plan the first one made (C++ integer starts and tensor starts alike).
  (void)eval(lax::dynamic_update_slice_in_dim(cache, token, 0, 2));
  (void)eval(lax::dynamic_update_slice_in_dim(cache, token, index(0, scalar), 2));
  auto const plans = plan::cached_plans();
  auto host = c.as<float>();
  auto tok = at("dus_cache_token update").as<float>();
  for (int at_pos : {1, 7, 3}) {
    auto by_int = eval(lax::dynamic_update_slice_in_dim(cache, token, at_pos, 2));
    auto by_tensor = eval(lax::dynamic_update_slice_in_dim(cache, token, index(at_pos, scalar), 2));
    auto want = host;
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t h = 0; h < 4; ++h)
        for (std::int64_t d = 0; d < 6; ++d)
          want[static_cast<std::size_t>(((b * 4 + h) * 8 + at_pos) * 6 + d)] = tok[static_cast<std::size_t>((b * 4 + h) * 6 + d)];
    CHECK(test::bitwise_equal(by_int.to_host(), want));
    CHECK(test::bitwise_equal(by_tensor.to_host(), want));
  }
  CHECK(plan::cached_plans() == plans);

  // A jitted step taking the position as a 0-d tensor: one signature for every position.
  auto step = jit([](Tensor<float> const& kv, Tensor<float> const& t, Tensor<std::int32_t> const& at_pos) {
    return lax::dynamic_update_slice_in_dim(kv, t, at_pos, 2);
  });
  CHECK(test::bitwise_equal(step(cache, token, index(5, scalar)).to_host(), at("dus_cache_token out").as<float>()));
  CHECK(test::bitwise_equal(step(cache, token, index(9, scalar)).to_host(), at("dus_cache_clamped out").as<float>()));
}

TEST_CASE("dynamic_slice and dynamic_update_slice name what is wrong", "[expr][dynamic_slice]") {
  auto x = device_put(test::iota_data<float>(Shape{4, 6}), Shape{4, 6}, one_device());
  auto u = device_put(test::iota_data<float>(Shape{2, 7}), Shape{2, 7}, one_device());
  auto v = device_put(test::iota_data<float>(Shape{2}), Shape{2}, one_device());
  auto idx = device_put(std::vector<std::int32_t>{1, 2}, Shape{2}, one_device());
  CHECK_THROWS_WITH(lax::dynamic_slice(x, std::tuple{1}, {2, 2}),
                    ContainsSubstring("dynamic_slice: the operand (4, 6) has rank 2, but 1 start indices were given"));
  CHECK_THROWS_WITH(lax::dynamic_slice(x, std::tuple{1, 1}, {2}),
                    ContainsSubstring("dynamic_slice: the operand (4, 6) has rank 2, but 1 slice sizes were given"));
  CHECK_THROWS_WITH(lax::dynamic_slice(x, std::tuple{1, 1}, {2, 7}),
                    ContainsSubstring("dimension 1 of the operand (4, 6) has size 6; the slice size 7 needs 0 <= size <= 6"));
  CHECK_THROWS_WITH(lax::dynamic_slice(x, std::tuple{idx, 1}, {2, 2}),
                    ContainsSubstring("dynamic_slice: start index 0 has shape (2,); each start index is a scalar"));
  CHECK_THROWS_WITH(lax::dynamic_slice_in_dim(x, 0, 2, 2),
                    ContainsSubstring("dynamic_slice_in_dim: axis 2 is out of range for shape (4, 6) of rank 2"));
  CHECK_THROWS_WITH(lax::dynamic_update_slice(x, u, std::tuple{0, 0}),
                    ContainsSubstring("dimension 1 of the update (2, 7) has size 7, larger than the operand (4, 6)'s 6"));
  CHECK_THROWS_WITH(lax::dynamic_update_slice(x, v, std::tuple{0, 0}),
                    ContainsSubstring("the update (2,) has rank 1, the operand (4, 6) rank 2"));
  CHECK_THROWS_WITH(lax::dynamic_update_slice_in_dim(x, u, 0, 0),
                    ContainsSubstring("dimension 1 of the update (2, 7) has size 7, larger than the operand (4, 6)'s 6"));
  auto narrow = device_put(test::iota_data<float>(Shape{2, 3}), Shape{2, 3}, one_device());
  CHECK_THROWS_WITH(lax::dynamic_update_slice_in_dim(x, narrow, 0, 0),
                    ContainsSubstring("dynamic_update_slice_in_dim: dimension 1 of the update (2, 3) has size 3; only "
                                      "the axis given may be smaller than the operand (4, 6)'s"));
  CHECK_THROWS_WITH(lax::dynamic_slice(x, std::tuple{std::int64_t{1} << 40, 0}, {1, 1}),
                    ContainsSubstring("1099511627776"));
  auto other = make_mesh({2}, {"a"}, {0, 1});
  auto on_two = device_put(test::iota_data<float>(Shape{4, 6}), Shape{4, 6}, NamedSharding(other, P("a")));
  auto elsewhere = device_put(std::vector<std::int32_t>{1}, Shape{}, NamedSharding(make_mesh({2}, {"a"}, {2, 3}), P()));
  CHECK_THROWS_WITH(lax::dynamic_slice(on_two, std::tuple{elsewhere, 0}, {1, 1}),
                    ContainsSubstring("dynamic_slice: operands live on different meshes"));
}

TEST_CASE("repeat, tile and broadcast_to match JAX on every sharding", "[expr][broadcast]") {
  auto const& r = at("repeat_axis1 x");
  struct Repeat {
    std::string name;
    std::int64_t repeats;
    std::optional<int> axis;
  };
  for (auto const& c : {Repeat{"repeat_axis1", 2, 1}, Repeat{"repeat_axis0", 3, 0}, Repeat{"repeat_last", 2, -1},
                        Repeat{"repeat_flat", 2, std::nullopt}}) {
    INFO(c.name);
    auto want = at(c.name + " out").as<float>();
    for (auto const& mesh : test::all_meshes())
      for (auto const& s : test::shardings_of(mesh, r.shape)) {
        INFO(to_string(mesh) << " " << to_string(s.spec()));
        auto x = put(r, s);
        Tensor<float> got = c.axis ? Tensor<float>(repeat(x, c.repeats, *c.axis) * 1.0f) : Tensor<float>(repeat(x, c.repeats) * 1.0f);
        CHECK(got.shape() == Shape(at(c.name + " out").shape));
        CHECK(test::bitwise_equal(got.to_host(), want));
      }
  }
  auto const& t = at("tile_2 x");
  for (auto const& mesh : test::all_meshes())
    for (auto const& s : test::shardings_of(mesh, t.shape)) {
      INFO(to_string(mesh) << " " << to_string(s.spec()));
      CHECK(test::bitwise_equal(eval(tile(put(t, s), {2})).to_host(), at("tile_2 out").as<float>()));
      CHECK(test::bitwise_equal(eval(tile(put(t, s), {2, 3})).to_host(), at("tile_2x3 out").as<float>()));
      auto up = eval(tile(put(t, s), {2, 1, 2}));
      CHECK(up.shape() == Shape{2, 2, 6});
      CHECK(test::bitwise_equal(up.to_host(), at("tile_rank_up out").as<float>()));
      // Broadcast read in place by the kernel that consumes it.
      auto const& b = at("broadcast_to x");
      CHECK(test::bitwise_equal(eval(broadcast_to(put(b, NamedSharding(mesh, P())), {2, 3, 4}) + 0.0f).to_host(),
                                at("broadcast_to out").as<float>()));
    }
  auto const& b = at("broadcast_to x");
  for (auto const& mesh : test::all_meshes())
    for (auto const& s : test::shardings_of(mesh, b.shape)) {
      INFO(to_string(mesh) << " " << to_string(s.spec()));
      CHECK(test::bitwise_equal(eval(broadcast_to(put(b, s), {2, 3, 4})).to_host(), at("broadcast_to out").as<float>()));
      CHECK(test::bitwise_equal(eval(lax::broadcast_in_dim(put(b, s), {2, 3, 4}, {1, 2}) * 2.0f).to_host(),
                                eval(broadcast_to(put(b, one_device()), {2, 3, 4}) * 2.0f).to_host()));
    }
}

TEST_CASE("repeating KV heads split over mp keeps them split: no collective", "[expr][broadcast][plan]") {
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  // (batch 2, KV heads 4, positions 8, head 6) on heads over mp, repeated for 2 query heads each.
  auto kv = put(at("dus_cache_token x"), NamedSharding(mesh, P("dp", "mp")));
  auto const& p = plan_of(repeat(kv, 2, 1) * 1.0f);
  INFO(explain(repeat(kv, 2, 1) * 1.0f));
  for (auto k : plan::all_collectives) CHECK(p.count(k) == 0);
  auto got = eval(repeat(kv, 2, 1) * 1.0f);
  CHECK(got.sharding() == NamedSharding(mesh, P("dp", "mp")));
  auto whole = eval(repeat(put(at("dus_cache_token x"), one_device()), 2, 1) * 1.0f);
  CHECK(test::bitwise_equal(got.to_host(), whole.to_host()));
}

TEST_CASE("broadcasts, repeats and tiles name what is wrong", "[expr][broadcast]") {
  auto x = device_put(test::iota_data<float>(Shape{3, 1}), Shape{3, 1}, one_device());
  CHECK_THROWS_WITH(broadcast_to(x, {4, 2}),
                    ContainsSubstring("broadcast_in_dim: operand dimension 0 of (3, 1) has size 3, but result "
                                      "dimension 0 of (4, 2) has size 4 (a broadcast keeps a size or widens a 1)"));
  CHECK_THROWS_WITH(broadcast_to(x, {3}), ContainsSubstring("broadcast_to: cannot broadcast (3, 1) to the lower rank (3,)"));
  CHECK_THROWS_WITH(lax::broadcast_in_dim(x, {2, 3, 1}, {1, 1}),
                    ContainsSubstring("broadcast_in_dim: broadcast dimension 1 of operand dimension 1 is out of range "
                                      "or out of order for the result (2, 3, 1)"));
  CHECK_THROWS_WITH(lax::broadcast_in_dim(x, {2, 3}, {1, 2}),
                    ContainsSubstring("broadcast_in_dim: broadcast dimension 2 of operand dimension 1 is out of range"));
  CHECK_THROWS_WITH(lax::broadcast_in_dim(x, {3, 2}, {0}),
                    ContainsSubstring("broadcast_in_dim: the operand (3, 1) has rank 2, but 1 broadcast dimensions were given"));
  CHECK_THROWS_WITH(repeat(x, 2, 2), ContainsSubstring("repeat: axis 2 is out of range for shape (3, 1) of rank 2"));
  CHECK_THROWS_WITH(repeat(x, -1, 0), ContainsSubstring("repeat: repeats is -1; it must be >= 0"));
  CHECK_THROWS_WITH(tile(x, {1, -2}), ContainsSubstring("tile: reps[1] is -2; repetitions must be >= 0"));
}

TEST_CASE("== and != on arrays compare elementwise as JAX does", "[expr][compare]") {
  auto want_eq = at("compare eq").as<std::int32_t>(), want_ne = at("compare ne").as<std::int32_t>();
  for (auto const& mesh : test::all_meshes())
    for (auto const& s : test::shardings_of(mesh, Shape{6})) {
      INFO(to_string(mesh) << " " << to_string(s.spec()));
      auto a = put(at("compare a"), s), b = put(at("compare b"), s);
      CHECK(eval(astype<std::int32_t>(a == b)).to_host() == want_eq);
      CHECK(eval(astype<std::int32_t>(a != b)).to_host() == want_ne);
      CHECK(eval(astype<std::int32_t>(a == 2.5f)).to_host() == std::vector<std::int32_t>{0, 0, 0, 1, 0, 0});
      CHECK(eval(where(a != a, 0.0f, a)).to_host() == eval(where(not_equal(a, a), 0.0f, a)).to_host());
    }
}

TEST_CASE("concatenate promotes mixed dtypes as jnp.concatenate does", "[expr][concatenate]") {
  auto want = at("concat_promote out").as<float>();
  for (auto const& mesh : test::all_meshes())
    for (auto const& s : test::shardings_of(mesh, Shape{2, 3})) {
      INFO(to_string(mesh) << " " << to_string(s.spec()));
      auto f = put(at("concat_promote f32"), s);
      std::vector<bfloat16> halves;
      for (double v : at("concat_promote bf16").values) halves.push_back(bfloat16(static_cast<float>(v)));
      auto h = device_put(halves, Shape{2, 2}, NamedSharding(mesh, P()));
      auto got = concatenate(1, f, h);
      static_assert(std::same_as<expr_value_t<decltype(got)>, float>);
      CHECK(test::bitwise_equal(eval(got).to_host(), want));
    }
  auto i = device_put(std::vector<std::int32_t>{1, 2}, Shape{2}, one_device());
  auto mixed = concatenate(0, i, i > 1);  // int32 with bool: int32
  static_assert(std::same_as<expr_value_t<decltype(mixed)>, std::int32_t>);
  CHECK(eval(mixed).to_host() == std::vector<std::int32_t>{1, 2, 0, 1});
}

TEST_CASE("take accepts int64 indices with the int32 result", "[expr][take]") {
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  auto table = device_put(test::iota_data<float>(Shape{16, 4}), Shape{16, 4}, NamedSharding(mesh, P("mp")));
  std::vector<std::int32_t> ids{3, -1, 15, 16, 0, -17, 7, 2};
  for (auto const& is : {one_device(), NamedSharding(mesh, P("dp"))}) {
    auto i32 = device_put(ids, Shape{8}, is);
    auto i64 = device_put(std::vector<std::int64_t>(ids.begin(), ids.end()), Shape{8}, is);
    CHECK(test::bitwise_equal(eval(take(table, i64)).to_host(), eval(take(table, i32)).to_host()));
    CHECK(test::bitwise_equal(eval(take(table, i64, 0)).to_host(),
                              eval(take(device_put(test::iota_data<float>(Shape{16, 4}), Shape{16, 4}, one_device()), i32)).to_host()));
  }
}

TEST_CASE("random::gumbel and random::categorical draw JAX's values on every sharding", "[expr][random]") {
  for (int seed : {0, 42}) {
    INFO("seed " << seed);
    auto const key = PRNGKey(seed);
    auto const& g = at("gumbel_" + std::to_string(seed) + " out");
    auto const& logits = at("categorical_" + std::to_string(seed) + " logits");
    auto const last = at("categorical_" + std::to_string(seed) + " out_last").as<std::int32_t>();
    auto const first = at("categorical_" + std::to_string(seed) + " out_first").as<std::int32_t>();
    for (auto const& mesh : test::all_meshes())
      for (auto const& s : test::shardings_of(mesh, g.shape)) {
        INFO(to_string(mesh) << " " << to_string(s.spec()));
        CHECK(test::bitwise_equal(random::gumbel<float>(key, g.shape, s).to_host(), g.as<float>()));
        auto l = put(logits, s);
        CHECK(eval(random::categorical(key, l)).to_host() == last);
        CHECK(eval(random::categorical(key, l, 0)).to_host() == first);
      }
  }
}

namespace {

// One top_k case against JAX's values and indices: on one device, then on every sharding of the
// operand (2-D operands: all of them; the 3-D one: a chosen few) of every test mesh.
template <class T>
void check_top_k(std::string const& c) {
  INFO(c);
  auto const& x = at(c + " x");
  std::int64_t const k = at(c + " k").as<std::int32_t>()[0];
  int const axis = at(c + " axis").as<std::int32_t>()[0];
  auto const want_indices = at(c + " indices").as<std::int32_t>();
  auto const want_values = at(c + " values");
  auto operand = [&](NamedSharding const& s) {
    if constexpr (std::same_as<T, std::int32_t>) return device_put(x.as<std::int32_t>(), x.shape, s);
    else return astype<T>(put(x, s));  // bfloat16: JAX's operand held exactly
  };
  auto check = [&](NamedSharding const& s) {
    INFO(to_string(s.mesh()) << " operand " << to_string(s.spec()));
    auto [values, indices] = lax::top_k(operand(s), k, axis);
    Tensor<std::int32_t> got_indices = eval(indices);
    CHECK(got_indices.shape() == Shape(at(c + " indices").shape));
    CHECK(got_indices.to_host() == want_indices);
    if constexpr (std::same_as<T, std::int32_t>) CHECK(eval(values).to_host() == want_values.as<std::int32_t>());
    else {
      auto const got = eval(astype<float>(values)).to_host();
      auto const want = want_values.as<float>();
      // (an empty k: bitwise_equal's memcmp must not see their null data)
      CHECK((want.empty() ? got.empty() : test::bitwise_equal(got, want)));
    }
  };
  check(one_device());
  for (auto const& mesh : test::all_meshes()) {
    for (auto const& s : x.shape.size() == 2 ? test::shardings_of(mesh, x.shape) : some_shardings(mesh, x.shape)) check(s);
  }
}

}  // namespace

TEST_CASE("lax::top_k matches lax.top_k (total order, first index on ties) on every sharding", "[expr][top_k]") {
  for (std::string c : {"topk_last", "topk_one", "topk_all", "topk_none", "topk_axis0", "topk_3d", "topk_wide"})
    check_top_k<float>(c);
  check_top_k<bfloat16>("topk_bf16");
  check_top_k<std::int32_t>("topk_int");
}

TEST_CASE("top_k over a vocabulary split over mp gathers k candidates per device, not the vocabulary",
          "[expr][top_k][plan]") {
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  auto logits = put(at("topk_wide x"), NamedSharding(mesh, P("dp", "mp")));
  auto [values, indices] = lax::top_k(logits, 50);
  auto const& p = plan_of(values);
  INFO(explain(values));
  CHECK(p.count(plan::Collective::all_gather) == 1);
  CHECK(p.count(plan::Collective::all_reduce) == 0);
  CHECK(p.count(plan::StepKind::reshard) == 0);
  for (auto const& step : p.steps)
    if (step.kind == plan::StepKind::collective) CHECK(step.bytes == 1 * 4 * 50 * 8);  // a row of 4 x 50 candidates
  Tensor<float> got = eval(values);
  CHECK(got.sharding() == NamedSharding(mesh, P("dp")));
  auto before = execution_counts();
  // Values and indices from one jitted call: two results of one program.
  auto both = jit([](Tensor<float> const& l) {
    auto [v, i] = lax::top_k(l, 50);
    return std::tuple{v, i};
  });
  auto [v, i] = both(logits);
  CHECK(test::bitwise_equal(v.to_host(), at("topk_wide values").as<float>()));
  CHECK(i.to_host() == at("topk_wide indices").as<std::int32_t>());
  CHECK(execution_counts()[plan::Collective::all_gather] - before[plan::Collective::all_gather] == 2);
}

TEST_CASE("top_k names what is wrong", "[expr][top_k]") {
  auto x = device_put(test::iota_data<float>(Shape{4, 6}), Shape{4, 6}, one_device());
  auto scalar = device_put(std::vector<float>{1.0f}, Shape{}, one_device());
  CHECK_THROWS_WITH(lax::top_k(x, 7),
                    ContainsSubstring("top_k: k = 7 is out of range for axis 1 of size 6 of the operand (4, 6); it "
                                      "needs 0 <= k <= 6"));
  CHECK_THROWS_WITH(lax::top_k(x, -1, 0),
                    ContainsSubstring("top_k: k = -1 is out of range for axis 0 of size 4 of the operand (4, 6)"));
  CHECK_THROWS_WITH(lax::top_k(x, 1, 2), ContainsSubstring("top_k: axis 2 is out of range for shape (4, 6) of rank 2"));
  CHECK_THROWS_WITH(lax::top_k(scalar, 1), ContainsSubstring("top_k: the operand is 0-d"));
}
