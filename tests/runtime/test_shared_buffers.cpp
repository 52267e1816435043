// Replicas on devices that share memory (every device of one process) share one buffer where
// their values are equal by construction: placed, drawn, filled by callback, all-reduced, and
// computed by fused regions whose inputs share. Values stay one device's, bit for bit.
#include <catch2/catch_test_macros.hpp>

#include <span>
#include <vector>

#include "support/data.hpp"
#include "support/meshes.hpp"
#include "tessel/runtime/tensor_impl.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;

namespace {

// For each shard this process holds, the first with the same data (sharing its buffer), or with
// the same box (by_box); empty shards (past an uneven end) are their own.
template <class T, class Same>
std::vector<std::size_t> first_alike(Tensor<T> const& x, Same same) {
  auto shards = x.addressable_shards();
  std::vector<std::size_t> first(shards.size());
  for (std::size_t i = 0; i < shards.size(); ++i) {
    std::size_t j = 0;
    if (shards[i].shape.num_elements() == 0) j = i;
    while (j < i && (shards[j].shape.num_elements() == 0 || !same(shards[j], shards[i]))) ++j;
    first[i] = j;
  }
  return first;
}
template <class T>
std::vector<std::size_t> sharing(Tensor<T> const& x) {
  return first_alike(x, [](auto const& a, auto const& b) { return a.data.data() == b.data.data(); });
}
template <class T>
std::vector<std::size_t> by_box(Tensor<T> const& x) {
  return first_alike(x, [](auto const& a, auto const& b) { return a.index == b.index; });
}

NamedSharding one_device() { return NamedSharding(make_mesh({1}, {"x"}, {0}), P()); }

}  // namespace

TEST_CASE("replicas placed, drawn or filled by callback share one buffer per box", "[runtime][shared_buffers]") {
  Shape const shape{8, 12};
  auto const data = test::iota_data<float>(shape, 1.0f);
  auto const drawn = Tensor<float>(random::normal<float>(random::PRNGKey(3), shape, one_device())).to_host();
  for (auto const& mesh : test::all_meshes()) {
    for (auto const& s : test::shardings_of(mesh, shape)) {
      INFO(to_string(s));
      auto x = device_put(data, shape, s);
      CHECK(sharing(x) == by_box(x));
      CHECK(test::shards_match(x, data));
      Tensor<float> r(random::normal<float>(random::PRNGKey(3), shape, s));
      CHECK(sharing(r) == by_box(r));
      CHECK(test::bitwise_equal(r.to_host(), drawn));
      auto c = make_array_from_callback<float>(shape, s, [&](Box const& box, std::span<float> block) {
        for (std::size_t i = 0; i < block.size(); ++i)
          block[i] = test::element_at(data, shape, box, static_cast<std::int64_t>(i));
      });
      CHECK(sharing(c) == by_box(c));
      CHECK(test::shards_match(c, data));
    }
  }
}

TEST_CASE("a fused region computes each shared buffer once, with one device's bits", "[runtime][shared_buffers]") {
  Shape const shape{16, 24};
  std::vector<float> xd(static_cast<std::size_t>(shape.num_elements())), gd(24), bd(24);
  for (std::size_t i = 0; i < xd.size(); ++i) xd[i] = static_cast<float>((i * 7919) % 101) * 0.25f - 12.0f;
  for (std::size_t i = 0; i < gd.size(); ++i) {
    gd[i] = 1.0f + 0.125f * static_cast<float>(i);
    bd[i] = 0.5f - 0.0625f * static_cast<float>(i);
  }
  auto layer = [&](NamedSharding const& s) {
    NamedSharding const rep(s.mesh(), P());
    auto x = device_put(xd, shape, s);
    auto g = device_put(gd, Shape{24}, rep), b = device_put(bd, Shape{24}, rep);
    Tensor<float> y = layer_norm(x, g, b) + x;  // a residual add on the LayerNorm, one region
    return std::pair{x, y};
  };
  auto const want = layer(one_device()).second.to_host();
  for (auto const& mesh : test::all_meshes()) {
    for (auto const& s : test::shardings_of(mesh, shape)) {
      if (!s.layout().dim_axes(1).empty()) continue;  // rows whole on each device: one region per device
      INFO(to_string(s));
      auto [x, y] = layer(s);
      CHECK(sharing(y) == sharing(x));
      CHECK(sharing(y) == by_box(y));
      CHECK(test::bitwise_equal(y.to_host(), want));
    }
  }
}

TEST_CASE("replicas in their own buffers compute their own blocks", "[runtime][shared_buffers]") {
  // A reshard's replicas are written apart: a region reading them shares nothing, and its values
  // are still one device's.
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  Shape const shape{8, 12};
  auto const data = test::iota_data<float>(shape, 1.0f);
  auto x = device_put(data, shape, NamedSharding(mesh, P("a", "b")));
  auto z = device_put(x, NamedSharding(mesh, P("a")));
  Tensor<float> w = z * 2.0f + 1.0f;
  CHECK(sharing(w) == sharing(z));
  std::vector<float> want(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) want[i] = data[i] * 2.0f + 1.0f;
  CHECK(test::bitwise_equal(w.to_host(), want));
}

TEST_CASE("an all-reduce writes its result once per group, and a mean divides it once", "[runtime][shared_buffers]") {
  Shape const shape{8, 24};
  auto const data = test::iota_data<float>(shape);  // small integers: every order of the sum is exact
  auto const one_sum = Tensor<float>(sum(device_put(data, shape, one_device()), 1)).to_host();
  auto const one_mean = Tensor<float>(mean(device_put(data, shape, one_device()), 1)).to_host();
  for (auto const& mesh : test::all_meshes()) {
    for (auto const& s : test::shardings_of(mesh, shape)) {
      if (s.layout().dim_axes(1).empty()) continue;  // the reduced dimension split: partial sums meet
      INFO(to_string(s));
      auto x = device_put(data, shape, s);
      Tensor<float> total = sum(x, 1), average = mean(x, 1);
      for (auto const& t : {total, average}) {
        auto share = sharing(t), box = by_box(t);
        for (std::size_t i = 0; i < share.size(); ++i) CHECK(box[i] == box[share[i]]);  // shared: the same box
        // Without replicas of x, devices with the same box of the result differ only along the
        // reduced dimension's axes: one all-reduce group, one buffer.
        if (s.layout().replication() == 1) CHECK(share == box);
      }
      CHECK(test::bitwise_equal(total.to_host(), one_sum));
      CHECK(test::bitwise_equal(average.to_host(), one_mean));
    }
  }
}

TEST_CASE("an empty shard never hides the buffer that follows it", "[runtime][shared_buffers]") {
  // 3 elements over 'b' (4): position (a0, b3) is empty, and its pointer is where the buffer of
  // (a1, b0) starts. Without owners every non-empty shard has a buffer of its own, which a step
  // writing in place (a mean's division) must visit.
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  auto t = detail::TensorImpl::allocate(Shape{3}, DType::float32, NamedSharding(mesh, P("b")));
  REQUIRE(t->shards[3].bytes.size() == 0);
  for (std::size_t pos = 0; pos < t->shards.size(); ++pos) CHECK(t->owns_buffer(pos));
  // With owners, the replicas along 'a' share: the first row's shards own theirs (and the empty
  // ones hold nothing to share).
  auto owner = detail::replica_owners(Shape{3}, NamedSharding(mesh, P("b")));
  auto shared = detail::TensorImpl::allocate(Shape{3}, DType::float32, NamedSharding(mesh, P("b")), owner);
  for (std::size_t pos = 0; pos < shared->shards.size(); ++pos) {
    INFO(pos);
    CHECK(shared->owns_buffer(pos) == (pos < 4 || pos == 7));
  }
}

TEST_CASE("inside shard_map, values that differ per device never share, though their inputs do",
          "[runtime][shared_buffers][shard_map]") {
  // x is replicated: all 8 devices read one buffer. axis_index differs per device (its own buffer
  // each), so the body's region computes every device's block, with that device's coordinate.
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  Shape const shape{4, 6};
  auto const data = test::iota_data<float>(shape, 1.0f);
  auto x = device_put(data, shape, NamedSharding(mesh, P()));
  REQUIRE(sharing(x) == std::vector<std::size_t>(8, 0));
  auto f = shard_map([](auto const& l) { return l * 2.0f + astype<float>(lax::axis_index("b")); }, mesh, {P()},
                     P("b"));
  Tensor<float> y = f(x);
  std::vector<float> want;
  for (int b = 0; b < 4; ++b)
    for (float v : data) want.push_back(v * 2.0f + static_cast<float>(b));
  CHECK(test::bitwise_equal(y.to_host(), want));
}
