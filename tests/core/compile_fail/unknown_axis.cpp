// Must not compile: a constant spec naming an axis the constant mesh lacks is a compile error
// that names the failing check (throw_unknown_axis).
#include "tessel/core/shard_layout.hpp"

constexpr tessel::MeshAxes mesh({4, 2}, {"dp", "mp"});
constexpr tessel::ShardLayout layout(mesh, tessel::P("dp", "tp"));
