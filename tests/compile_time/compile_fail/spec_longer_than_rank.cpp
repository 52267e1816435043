// A static_jit argument whose spec is longer than its rank: a compile error naming the spec and
// the shape. (An uneven split is no error: the last devices' blocks are shorter.)
#include "tessel/plan/static_plan.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;

struct Program {
  static constexpr MeshAxes mesh{{2, 4}, {"dp", "mp"}};
  static constexpr std::tuple args{Arg<float>{{16, 64}, P("dp")}, Arg<float>{{64, 126}, P(None, "mp", "dp")}};
};
constexpr auto plan = static_plan<Program>([](auto const& x, auto const& w) { return matmul(x, w); });
