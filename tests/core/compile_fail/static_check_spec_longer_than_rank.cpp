// Must not compile, naming the spec, its length and the shape's rank.
#include "tessel/core/static_check.hpp"

constexpr tessel::MeshAxes mesh({4, 2}, {"dp", "mp"});
constexpr tessel::Shape shape{10, 4};
TESSEL_STATIC_CHECK(mesh, tessel::P("dp", tessel::None, "mp"), shape);
