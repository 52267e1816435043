// Must not compile, and the first error must name the axis and the mesh:
// "P('dp', 'tp') names mesh axis 'tp', which is not in the mesh ('dp': 4, 'mp': 2)".
#include "tessel/core/static_check.hpp"

constexpr tessel::MeshAxes mesh({4, 2}, {"dp", "mp"});
TESSEL_STATIC_CHECK(mesh, tessel::P("dp", "tp"));
