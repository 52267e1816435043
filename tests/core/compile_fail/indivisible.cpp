// Must not compile: a constant shape that the spec's axes do not divide.
#include "tessel/core/shard_layout.hpp"

constexpr tessel::MeshAxes mesh({4, 2}, {"dp", "mp"});
constexpr tessel::ShardLayout layout(mesh, tessel::P("dp"));
static_assert((layout.check_shape(tessel::Shape{10, 4}), true));
