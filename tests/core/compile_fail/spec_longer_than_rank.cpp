// Must not compile: a constant spec with more entries than the shape has dimensions.
#include "tessel/core/shard_layout.hpp"

constexpr tessel::MeshAxes mesh({4, 2}, {"dp", "mp"});
constexpr tessel::ShardLayout layout(mesh, tessel::P("dp", tessel::None, "mp"));
static_assert((layout.check_shape(tessel::Shape{10, 4}), true));
