#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cctype>
#include <string>

#include "tessel/tessel.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace tessel;

namespace {
// The pictures name the build's platform: "CPU 0" on host backends, "GPU 0" on CUDA and HIP.
std::string on_this_platform(std::string text) {
  std::string name(platform_name());
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (auto at = text.find("CPU"); at != std::string::npos; at = text.find("CPU", at + name.size()))
    text.replace(at, 3, name);
  return text;
}
}  // namespace

TEST_CASE("the tutorial's (128, 4) tensor over 8 devices draws as 8 stacked boxes", "[tools][visualize]") {
  auto mesh = make_mesh({8}, {"data"});
  auto text = render_sharding(Shape{128, 4}, NamedSharding(mesh, P("data")));
  CHECK(text == on_this_platform(
        "┌───────────┐\n"
        "│   CPU 0   │\n"
        "├───────────┤\n"
        "│   CPU 1   │\n"
        "├───────────┤\n"
        "│   CPU 2   │\n"
        "├───────────┤\n"
        "│   CPU 3   │\n"
        "├───────────┤\n"
        "│   CPU 4   │\n"
        "├───────────┤\n"
        "│   CPU 5   │\n"
        "├───────────┤\n"
        "│   CPU 6   │\n"
        "├───────────┤\n"
        "│   CPU 7   │\n"
        "└───────────┘\n"));
}

TEST_CASE("replicated devices are listed together in one box", "[tools][visualize]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  CHECK(render_sharding(Shape{128, 4}, NamedSharding(mesh, P(None, "mp")), {BoxStyle::ascii}) == on_this_platform(
        "+-----------------+-----------------+\n"
        "|                 |                 |\n"
        "|   CPU 0,2,4,6   |   CPU 1,3,5,7   |\n"
        "|                 |                 |\n"
        "+-----------------+-----------------+\n"));
  auto rows = render_sharding(Shape{128, 4}, NamedSharding(mesh, P("dp", None)), {BoxStyle::ascii});
  CHECK(rows == on_this_platform(
        "+-------------+\n"
        "|             |\n"
        "|   CPU 0,1   |\n"
        "|             |\n"
        "+-------------+\n"
        "|             |\n"
        "|   CPU 2,3   |\n"
        "|             |\n"
        "+-------------+\n"
        "|             |\n"
        "|   CPU 4,5   |\n"
        "|             |\n"
        "+-------------+\n"
        "|             |\n"
        "|   CPU 6,7   |\n"
        "|             |\n"
        "+-------------+\n"));
}

TEST_CASE("a 2-D tiling draws as a grid, a 1-D tensor as a row", "[tools][visualize]") {
  auto mesh = make_mesh({2, 4}, {"a", "b"});
  auto grid = render_sharding(Shape{8, 8}, NamedSharding(mesh, P("a", "b")), {BoxStyle::ascii});
  CHECK_THAT(grid, ContainsSubstring(on_this_platform("|   CPU 4   |   CPU 5   |   CPU 6   |   CPU 7   |")));
  auto row = render_sharding(Shape{16}, NamedSharding(mesh, P("b")), {BoxStyle::ascii});
  CHECK_THAT(row, ContainsSubstring(on_this_platform("|   CPU 0,4   |   CPU 1,5   |   CPU 2,6   |   CPU 3,7   |")));
  auto replicated = render_sharding(Shape{16}, NamedSharding(mesh, P()), {BoxStyle::ascii});
  CHECK_THAT(replicated, ContainsSubstring(on_this_platform("|   CPU 0,1,2,3,4,5,6,7   |")));
}

TEST_CASE("visualize_array_sharding writes the drawing of a tensor", "[tools][visualize]") {
  auto mesh = make_mesh({8}, {"data"});
  auto x = random::normal(PRNGKey(0), Shape{16, 2}, NamedSharding(mesh, P("data")));
  std::ostringstream out;
  visualize_array_sharding(x, {}, out);
  CHECK(out.str() == render_sharding(x.shape(), x.sharding()));
}

TEST_CASE("visualize refuses ranks it cannot draw", "[tools][visualize][error]") {
  auto mesh = make_mesh({8}, {"data"});
  CHECK_THROWS_WITH(render_sharding(Shape{8, 2, 2}, NamedSharding(mesh, P("data"))),
                    ContainsSubstring("draws 1-D and 2-D tensors; shape (8, 2, 2) has rank 3"));
}
