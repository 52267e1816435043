// The slice arithmetic is constexpr: with constant meshes, specs and shapes it runs in the
// compiler. These are compile-time tests; the runtime TEST_CASE only makes them visible in CTest.
#include <catch2/catch_test_macros.hpp>

#include "tessel/core/shard_layout.hpp"
#include "tessel/core/static_check.hpp"

using namespace tessel;

namespace {
constexpr MeshAxes mesh({4, 2}, {"dp", "mp"});
constexpr ShardLayout rows(mesh, P("dp", None));
constexpr ShardLayout cols(mesh, P(None, "mp"));
constexpr Shape shape{128, 4};

static_assert(rows.replication() == 2);
static_assert(rows.block_shape(shape) == Shape{32, 4});
// An uneven split is arithmetic like any other: 10 rows over 'dp' (4) are blocks of 3, the last 1.
static_assert(rows.box(Shape{10, 4}, 6)[0] == IndexRange{9, 10});
static_assert(ShardLayout(mesh, P({"dp", "mp"})).box(Shape{10, 4}, 7)[0].size() == 0);
static_assert(rows.box(shape, 3)[0] == IndexRange{32, 64});
static_assert(cols.box(shape, 5)[1] == IndexRange{2, 4});
static_assert(ShardLayout(mesh, P()).fully_replicated());
static_assert(ShardLayout(mesh, P("dp")) == rows);  // trailing None changes nothing
static_assert((rows.check_shape(shape), true));
}  // namespace

TEST_CASE("slice arithmetic runs at compile time", "[core][constexpr]") { SUCCEED("checked by static_assert"); }

// TESSEL_STATIC_CHECK accepts valid constant layouts (tests/core/compile_fail has the failures).
namespace {
constexpr tessel::MeshAxes checked_mesh({4, 2}, {"dp", "mp"});
constexpr tessel::Shape checked_shape{16, 6};
TESSEL_STATIC_CHECK(checked_mesh, tessel::P("dp", "mp"));
TESSEL_STATIC_CHECK(checked_mesh, tessel::P({"mp", "dp"}), checked_shape);
static_assert(tessel::ShardLayout::error(checked_mesh, tessel::P("dp", "tp")).view() ==
              "P('dp', 'tp') names mesh axis 'tp', which is not in the mesh ('dp': 4, 'mp': 2)");
static_assert(tessel::ShardLayout::error(checked_mesh, tessel::P("dp", "dp")).view() ==
              "P('dp', 'dp') uses mesh axis 'dp' for both dimension 0 and dimension 1; a mesh axis may shard at most "
              "one dimension");
}  // namespace

// A plain FixedVector converts to the capacity-tagged vectors MeshAxes takes (user code builds
// meshes from them).
static_assert(tessel::MeshAxes(tessel::FixedVector<int, tessel::max_mesh_axes>{2, 3},
                               tessel::FixedVector<tessel::AxisName, tessel::max_mesh_axes>{"x", "y"})
                  .num_devices() == 6);
