// Donation (runtime/donate.hpp): a donated operand of dynamic_update_slice lends the result its
// buffers when nothing else can see them, and is copied (with the same values) whenever something
// could: not donated, read again later in the plan, or sharing a buffer with replicas.
#include <catch2/catch_test_macros.hpp>

#include <vector>

#include "support/data.hpp"
#include "support/meshes.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;

namespace {

std::vector<void const*> buffers(Tensor<float> const& t) {
  std::vector<void const*> out;
  for (auto const& s : t.impl_ptr()->shards) out.push_back(s.bytes.data());
  return out;
}

// The cache (2, 4 heads, 8 positions, 6) with a token's (2, 4, 1, 6) written at `pos`.
std::vector<float> written(std::vector<float> cache, std::vector<float> const& token, std::int64_t pos) {
  for (std::int64_t r = 0; r < 8; ++r)
    for (std::int64_t d = 0; d < 6; ++d)
      cache[static_cast<std::size_t>((r * 8 + pos) * 6 + d)] = token[static_cast<std::size_t>(r * 6 + d)];
  return cache;
}

}  // namespace

TEST_CASE("a donated cache takes the update in place; one not donated or read again is copied", "[runtime][donate]") {
  Shape const shape{2, 4, 8, 6}, token_shape{2, 4, 1, 6};
  auto const host = test::iota_data<float>(shape);
  std::vector<float> tok(48);
  for (std::size_t i = 0; i < tok.size(); ++i) tok[i] = -1.0f - static_cast<float>(i);
  for (auto const& mesh : test::all_meshes()) {
    // Split over batch, heads and the head dimension by every mesh axis (no replicas, which may
    // share a buffer): a KV cache's layout.
    PartitionSpec spec;
    std::size_t const n = mesh.axes().num_axes();
    if (n == 1) spec = P(None, mesh.axes().name(0));
    else if (n == 2) spec = P(mesh.axes().name(0), mesh.axes().name(1));
    else spec = P(mesh.axes().name(0), mesh.axes().name(1), None, mesh.axes().name(2));
    NamedSharding const heads(mesh, spec);
    INFO(to_string(mesh) << " " << to_string(heads.spec()));
    auto token = device_put(tok, token_shape, heads);

    auto cache = device_put(host, shape, heads);
    auto const before = buffers(cache);
    Tensor<float> kept = eval(lax::dynamic_update_slice_in_dim(cache, token, 3, 2));
    CHECK(buffers(kept) != before);  // not donated: a new tensor; the cache is as it was
    CHECK(cache.to_host() == host);
    CHECK(kept.to_host() == written(host, tok, 3));

    Tensor<float> updated = eval(lax::dynamic_update_slice_in_dim(donate(cache), token, 5, 2));
    CHECK(buffers(updated) == before);  // donated: the same buffers
    CHECK(updated.to_host() == written(host, tok, 5));
    // The donation is used up: the next update of the (now updated) cache copies again.
    Tensor<float> again = eval(lax::dynamic_update_slice_in_dim(updated, token, 0, 2));
    CHECK(buffers(again) != before);

    // Donated but read again by the same plan: copied, and the later read sees the old values.
    auto other = device_put(host, shape, heads);
    Tensor<float> both = eval(lax::dynamic_update_slice_in_dim(donate(other), token, 1, 2) + other);
    std::vector<float> want = written(host, tok, 1);
    for (std::size_t i = 0; i < want.size(); ++i) want[i] += host[i];
    CHECK(both.to_host() == want);
    CHECK(other.to_host() == host);
  }
}

TEST_CASE("a replicated donated operand whose replicas share a buffer is copied", "[runtime][donate]") {
  auto mesh = make_mesh({8}, {"x"});
  Shape const shape{4, 6};
  auto const host = test::iota_data<float>(shape);
  // A replicated device_put: one buffer for the replicas on this host (TensorImpl::allocate's owner).
  auto replicated = device_put(host, shape, NamedSharding(mesh, P()));
  auto const before = buffers(replicated);
  REQUIRE(before[1] == before[0]);
  auto update = device_put(std::vector<float>(6, 7.0f), Shape{1, 6}, NamedSharding(mesh, P()));
  Tensor<float> out = eval(lax::dynamic_update_slice_in_dim(donate(replicated), update, 2, 0));
  auto want = host;
  for (std::size_t i = 12; i < 18; ++i) want[i] = 7.0f;
  CHECK(out.to_host() == want);
  CHECK(buffers(out) != before);
  CHECK(replicated.to_host() == host);
}

TEST_CASE("a jitted decode step with donated caches writes each position in place", "[runtime][donate][jit]") {
  auto mesh = make_mesh({2, 4}, {"dp", "mp"});
  NamedSharding const heads(mesh, P("dp", "mp")), scalar(mesh, P());
  Shape const shape{2, 4, 8, 6};
  auto const host = test::iota_data<float>(shape);
  std::vector<float> tok(48, 0.5f);
  auto token = device_put(tok, Shape{2, 4, 1, 6}, heads);
  auto step = jit([](std::vector<Tensor<float>> const& caches, Tensor<float> const& t, Tensor<std::int32_t> const& at) {
    std::vector<Tensor<float>> out;
    for (auto const& c : caches) out.push_back(Tensor<float>(lax::dynamic_update_slice_in_dim(c, t, at, 2)));
    return out;
  });
  std::vector<Tensor<float>> caches{device_put(host, shape, heads), device_put(host, shape, heads)};
  auto const first = buffers(caches[0]);
  auto want = host;
  for (std::int32_t pos = 0; pos < 4; ++pos) {
    auto at = device_put(std::vector<std::int32_t>{pos}, Shape{}, scalar);
    caches = step(donate(caches), token, at);
    want = written(want, tok, pos);
    CHECK(buffers(caches[0]) == first);
    CHECK(caches[0].to_host() == want);
    CHECK(caches[1].to_host() == want);
  }
}
