// Must not compile, naming the dimension, its size and the axes that do not divide it.
#include "tessel/core/static_check.hpp"

constexpr tessel::MeshAxes mesh({4, 2}, {"dp", "mp"});
constexpr tessel::Shape shape{10, 4};
TESSEL_STATIC_CHECK(mesh, tessel::P({"dp", "mp"}), shape);
