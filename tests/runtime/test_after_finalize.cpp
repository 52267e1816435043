// A tensor that outlives the runtime (its ScopeGuard ended) can still be destroyed, and reading it
// says the runtime was finalized. Its own binary: Kokkos cannot start again in the same process.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <optional>

#include "tessel/tessel.hpp"

using namespace tessel;

TEST_CASE("tensors outliving the ScopeGuard are destroyed safely and refuse use with a message", "[runtime][lifetime]") {
  std::optional<Tensor<float>> kept, pooled;
  {
    ScopeGuard guard;
    set_device_count(8);
    auto mesh = make_mesh({2, 4}, {"a", "b"});
    kept = random::normal<float>(random::PRNGKey(0), Shape{64, 32}, NamedSharding(mesh, P("a", "b")));
    pooled = Tensor<float>(*kept * 2.0f);
    { Tensor<float> dropped = *kept + 1.0f; }  // its memory goes to the pool before the guard ends
  }
  CHECK(kept->shape() == Shape{64, 32});
  CHECK_THROWS_WITH(kept->to_host(), "the tessel runtime was finalized (its ScopeGuard ended): tensors can still be "
                                     "destroyed, but not read or computed with");
  CHECK_THROWS_WITH(Tensor<float>(*kept + *pooled), "the tessel runtime was finalized (its ScopeGuard ended): tensors "
                                                    "can still be destroyed, but not read or computed with");
  kept.reset();  // frees host memory without Kokkos
  pooled.reset();
}
