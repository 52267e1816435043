// A static_jit argument whose spec names an axis the mesh lacks: a compile error naming the
// argument, the axis and the mesh.
#include "tessel/plan/static_plan.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;

struct Program {
  static constexpr MeshAxes mesh{{2, 4}, {"dp", "mp"}};
  static constexpr std::tuple args{Arg<float>{{16, 64}, P("dp")}, Arg<float>{{64, 128}, P(None, "tp")}};
};
constexpr auto plan = static_plan<Program>([](auto const& x, auto const& w) { return matmul(x, w); });
