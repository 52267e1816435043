#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <array>
#include <string>
#include <vector>

#include "support/meshes.hpp"
#include "tessel/tessel.hpp"

using Catch::Matchers::ContainsSubstring;
using namespace tessel;

TEST_CASE("devices_indices_map matches JAX's for the tutorial's 2-D mesh", "[core][layout]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  Shape shape{128, 4};
  auto rows = NamedSharding(mesh, P("dp", None)).devices_indices_map(shape);
  // jax: device 3 (dp=1, mp=1) holds rows 32:64, all columns.
  CHECK(rows[3].first == 3);
  CHECK(to_string(rows[3].second) == "[32:64, 0:4]");
  CHECK(rows[2].second == rows[3].second);
  auto cols = NamedSharding(mesh, P(None, "mp")).devices_indices_map(shape);
  CHECK(to_string(cols[5].second) == "[0:128, 2:4]");
  auto both = NamedSharding(mesh, P({"mp", "dp"})).devices_indices_map(shape);
  // mp is the major axis here: device (dp=1, mp=1) is tile 1*4 + 1 = 5 of 8 rows of 16.
  CHECK(to_string(both[3].second) == "[80:96, 0:4]");
}

TEST_CASE("every element is held by exactly the devices the sharding says", "[core][layout][property]") {
  // Even sizes (24 divides over every test mesh's axes) and uneven ones (7, 1 and 13 over up to 8
  // devices: short blocks, and devices holding nothing).
  for (auto const& mesh : test::all_meshes()) {
    for (int rank = 1; rank <= 3; ++rank)
    for (bool even : {true, false}) {
      Shape shape;
      for (int d = 0; d < rank; ++d) shape.push_back(even ? 24 * (d + 1) : std::array<std::int64_t, 3>{7, 1, 13}[d]);
      for (auto const& spec : test::all_specs(mesh.axes(), rank)) {
        NamedSharding sharding(mesh, spec);
        auto const& layout = sharding.layout();
        // Count, per element, how many devices hold it: each block's volume times its holders
        // must cover the tensor `replication` times, and blocks must tile without overlap.
        auto map = sharding.devices_indices_map(shape);
        std::int64_t covered = 0;
        for (int p = 0; p < mesh.num_devices(); ++p) {
          Box const& box = map[static_cast<std::size_t>(p)].second;
          REQUIRE(box.extent() == sharding.shard_shape(shape, p));
          if (p == 0) REQUIRE(box.extent() == sharding.block_shape(shape));
          covered += box.num_elements();
          if (box.empty()) continue;  // a device past an uneven end
          int same = 0, overlapping = 0;
          for (auto const& [id2, box2] : map) {
            same += box2 == box;
            overlapping += !intersect(box, box2).empty();
          }
          REQUIRE(same == layout.replication());
          REQUIRE(overlapping == same);  // blocks either coincide or are disjoint
        }
        REQUIRE(covered == shape.num_elements() * layout.replication());
      }
    }
  }
}

TEST_CASE("a spec naming an axis the mesh lacks is refused", "[core][layout][error]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  CHECK_THROWS_WITH(NamedSharding(mesh, P("dp", "tp")),
                    ContainsSubstring("P('dp', 'tp') names mesh axis 'tp', which is not in the mesh ('dp': 4, 'mp': 2)"));
}

TEST_CASE("a spec using one mesh axis twice is refused", "[core][layout][error]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  CHECK_THROWS_WITH(NamedSharding(mesh, P("dp", "dp")),
                    ContainsSubstring("P('dp', 'dp') uses mesh axis 'dp' for both dimension 0 and dimension 1"));
  CHECK_THROWS_WITH(NamedSharding(mesh, P({"mp", "mp"})),
                    ContainsSubstring("uses mesh axis 'mp' twice in dimension 0"));
}

TEST_CASE("a spec longer than the tensor's rank is refused", "[core][layout][error]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  NamedSharding s(mesh, P("dp", None, "mp"));
  CHECK_THROWS_WITH(s.check_shape(Shape{128, 4}),
                    ContainsSubstring("P('dp', None, 'mp') has 3 entries but the tensor of shape (128, 4) has rank 2"));
}

TEST_CASE("an uneven dimension gives every device a block of ceil(n/k), cut at the end", "[core][layout][uneven]") {
  auto mesh = make_mesh({4, 2}, {"dp", "mp"});
  NamedSharding rows(mesh, P({"dp", "mp"}));
  Shape shape{12, 4};
  rows.check_shape(shape);  // any size tiles
  CHECK(rows.block_shape(shape) == Shape{2, 4});
  CHECK(!rows.layout().even(shape));
  std::vector<std::string> boxes;
  for (int p = 0; p < 8; ++p) boxes.push_back(to_string(rows.layout().box(shape, p)));
  CHECK(boxes == std::vector<std::string>{"[0:2, 0:4]", "[2:4, 0:4]", "[4:6, 0:4]", "[6:8, 0:4]", "[8:10, 0:4]",
                                          "[10:12, 0:4]", "[12:12, 0:4]", "[12:12, 0:4]"});
  CHECK(rows.shard_shape(shape, 6) == Shape{0, 4});
  NamedSharding cols(mesh, P(None, "mp"));
  CHECK(cols.shard_shape(Shape{8, 3}, 0) == Shape{8, 2});
  CHECK(cols.shard_shape(Shape{8, 3}, 1) == Shape{8, 1});
  // GPT-2's vocabulary over 4 devices: 12565 rows each, the last 12562.
  NamedSharding vocab(mesh, P("dp"));
  CHECK(vocab.shard_shape(Shape{50257, 768}, 0) == Shape{12565, 768});
  CHECK(vocab.shard_shape(Shape{50257, 768}, 7) == Shape{12562, 768});
  CHECK(vocab.layout().even(Shape{50256, 768}));
}
