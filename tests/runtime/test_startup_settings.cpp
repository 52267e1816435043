// A start-up setting the machine cannot honour (TESSEL_NUM_DEVICES, TESSEL_GPUS,
// TESSEL_DEVICE_MEMORY) is a tessel::Error a program can catch, thrown by the first call that
// needs it, never by ScopeGuard's constructor (which a program makes outside any try block, where
// a throw is std::terminate). One process per setting (CTest runtime.startup_*: Kokkos cannot start
// twice in a process), each given the setting and the message it must produce in
// TESSEL_EXPECT_ERROR.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdlib>
#include <string>

#include "tessel/tessel.hpp"

using namespace tessel;
using Catch::Matchers::ContainsSubstring;

TEST_CASE("a bad start-up setting is a catchable error of the first call that needs it", "[.startup]") {
  char const* expected = std::getenv("TESSEL_EXPECT_ERROR");
  REQUIRE(expected != nullptr);
  std::optional<ScopeGuard> guard;
  REQUIRE_NOTHROW(guard.emplace());
  std::string const what = expected;
  // Asked again, the same message: nothing was half made.
  for (int attempt = 0; attempt < 2; ++attempt) {
    try {
      auto mesh = make_mesh({device_count()}, {"x"});
      auto t = device_put(std::vector<float>{1, 2, 3, 4}, {4}, NamedSharding(mesh, P("x")));
      Tensor<float> doubled = t * 2.0f;
      (void)doubled.to_host();
      FAIL("no error; expected one containing: " << what);
    } catch (Error const& e) {
      CHECK_THAT(std::string(e.what()), ContainsSubstring(what));
    }
  }
}
