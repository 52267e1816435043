#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "tessel/tessel.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace tessel;

TEST_CASE("make_mesh lays the process's devices row-major over named axes", "[core][mesh]") {
  REQUIRE(device_count() == 8);
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  CHECK(mesh.num_devices() == 8);
  CHECK(mesh.axis_size("dp") == 4);
  CHECK(mesh.axis_size("mp") == 2);
  CHECK(mesh.device_id(5) == 5);
  auto c = mesh.axes().coords(5);
  CHECK(c[0] == 2);
  CHECK(c[1] == 1);
  CHECK(to_string(mesh) == "Mesh('dp': 4, 'mp': 2; devices [0 1 2 3 4 5 6 7])");
}

TEST_CASE("make_mesh over chosen devices", "[core][mesh]") {
  auto mesh = make_mesh({3, 2}, {"a", "b"}, {5, 0, 3, 1, 7, 2});
  CHECK(mesh.num_devices() == 6);
  CHECK(mesh.device_id(0) == 5);
  CHECK(mesh.device_id(5) == 2);
}

TEST_CASE("make_mesh refuses a shape whose product is not the device count", "[core][mesh][error]") {
  CHECK_THROWS_WITH(make_mesh({4, 4}, {"dp", "mp"}),
                    ContainsSubstring("mesh ('dp': 4, 'mp': 4) needs 16 devices but this process has 8"));
  CHECK_THROWS_WITH(make_mesh({3}, {"x"}), ContainsSubstring("needs 3 devices but this process has 8"));
}

TEST_CASE("mesh axis names must be distinct and non-empty", "[core][mesh][error]") {
  CHECK_THROWS_WITH(make_mesh({4, 2}, {"dp", "dp"}),
                    ContainsSubstring("mesh axis name 'dp' is used twice (axes 0 and 1)"));
  CHECK_THROWS_WITH(make_mesh({4, 2}, {"dp", ""}), ContainsSubstring("mesh axis 1 has an empty name"));
  CHECK_THROWS_WITH(make_mesh({8}, {"dp", "mp"}), ContainsSubstring("mesh shape has 1 axes but 2 axis names"));
  CHECK_THROWS_WITH(make_mesh({8, 0}, {"dp", "mp"}), ContainsSubstring("mesh axis 'mp' has size 0"));
  CHECK_THROWS_WITH(make_mesh({8}, {"an_axis_name_much_longer_than_thirty_one"}),
                    ContainsSubstring("has 40 characters; tessel allows at most 31"));
}

TEST_CASE("mesh device lists are checked", "[core][mesh][error]") {
  CHECK_THROWS_WITH(make_mesh({2}, {"x"}, {3, 3}), ContainsSubstring("device 3 appears twice"));
  CHECK_THROWS_WITH(make_mesh({2}, {"x"}, {3, 9}), ContainsSubstring("device 9 does not exist: this process has 8"));
  CHECK_THROWS_WITH(make_mesh({2}, {"x"}, {3}), ContainsSubstring("needs 2 devices but 1 device ids were given"));
  CHECK_THROWS_WITH(make_mesh({2}, {"x"}, {0, 1}).axis_size("y"), ContainsSubstring("has no axis 'y'"));
}
