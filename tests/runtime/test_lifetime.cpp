// Tensors as resources: moves leave a valid tensor, running out of memory is a tessel::Error that
// names the tensor and changes nothing, and nothing crashes on the way.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <utility>

#include "support/data.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("a moved-from tensor is still the same valid tensor", "[runtime][lifetime]") {
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  auto data = test::iota_data<float>({8, 4});
  auto x = device_put(data, Shape{8, 4}, NamedSharding(mesh, P("a", "b")));
  Tensor<float> y = std::move(x);
  CHECK(x.size() == 32);  // NOLINT(bugprone-use-after-move): the point of the test
  CHECK(x.to_host() == data);
  CHECK(Tensor<float>(x + y).to_host()[1] == 2 * data[1]);
  Tensor<float> z = y;
  z = std::move(y);
  CHECK(y.shape() == Shape{8, 4});  // NOLINT(bugprone-use-after-move)
  CHECK(z.sharding() == y.sharding());
  CHECK_THROWS_WITH(Tensor<float>(std::shared_ptr<detail::TensorImpl const>()),
                    "tessel::Tensor: built from a null TensorImpl");
}

TEST_CASE("running out of device memory is an error naming the tensor, and changes nothing", "[runtime][lifetime]") {
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  auto small = device_put(test::iota_data<float>({8, 4}), Shape{8, 4}, NamedSharding(mesh, P("a")));
  auto before = small.to_host();
  // 2^42 float32 = 16 TiB per device when replicated: no machine here has it.
  Shape huge{std::int64_t{1} << 21, std::int64_t{1} << 21};
  try {
    (void)random::normal<float>(random::PRNGKey(0), huge, NamedSharding(mesh, P()));
    FAIL("allocating 16 TiB per device succeeded");
  } catch (OutOfMemory const& e) {
    CHECK_THAT(e.what(), ContainsSubstring("out of memory on devices 0, 1, 2, 3, 4, 5, 6, 7 for a float32 tensor of "
                                           "shape (2097152, 2097152) sharded NamedSharding(mesh=('a': 2, 'b': 4), "
                                           "spec=P()): its shard needs 17592186044416 bytes"));
    // The replicas share one buffer (devices of one process share memory).
    CHECK_THAT(e.what(), ContainsSubstring("17592186044416 bytes for the 8 shards this process holds in 1 buffer: "
                                           "replicas share memory"));
    CHECK(e.bytes() >= std::size_t{17592186044416});
  }
  // Sharded, it is 2 TiB per device: still too much, and the message says which device failed.
  CHECK_THROWS_AS(random::normal<float>(random::PRNGKey(0), huge, NamedSharding(mesh, P("a", "b"))), OutOfMemory);
  // An expression whose output cannot be allocated fails the same way.
  auto column = random::uniform<float>(random::PRNGKey(1), Shape{std::int64_t{1} << 21, 1});
  auto row = random::uniform<float>(random::PRNGKey(2), Shape{1, std::int64_t{1} << 21});
  CHECK_THROWS_AS(Tensor<float>(column * row), OutOfMemory);
  CHECK(small.to_host() == before);
  CHECK(Tensor<float>(small * 2.0f).to_host()[3] == 2 * before[3]);
}

TEST_CASE("shapes and meshes whose sizes overflow are refused, naming them", "[runtime][core][error]") {
  CHECK_THROWS_WITH(make_mesh({8, 536870913}, {"a", "b"}),
                    "mesh ('a': 8, 'b': 536870913) would have more devices than tessel can address (at most 16777216)");
  CHECK_THROWS_WITH(device_put(std::vector<float>(4), Shape{-2, -2}),
                    "shape (-2, -2) has size -2 in dimension 0; dimension sizes must be >= 0");
  std::int64_t big = std::int64_t{1} << 32;
  CHECK_THROWS_WITH(random::normal<float>(random::PRNGKey(0), Shape{big, big}),
                    ContainsSubstring("shape (4294967296, 4294967296) has more elements than tessel can address"));
  // A zero dimension makes any other size harmless.
  CHECK(Shape{big, big, 0}.num_elements() == 0);
  CHECK_THROWS_WITH(make_mesh({1, 1, 1, 1, 1, 1, 1, 1, 1}, {"a", "b", "c", "d", "e", "f", "g", "h", "i"}),
                    "tessel supports at most 8 mesh axes, but 9 were given");
  auto x = random::normal<float>(random::PRNGKey(0), Shape{2, 2});
  CHECK_THROWS_WITH(sum(x, {0, 1, 0, 1, 0, 1, 0, 1, 0}), "tessel supports at most 8 reduction axes, but 9 were given");
  CHECK_THROWS_WITH((Shape{1, 1, 1, 1, 1, 1, 1, 1, 1}), "tessel supports at most 8 dimensions (tensor rank), but 9 were given");
}
