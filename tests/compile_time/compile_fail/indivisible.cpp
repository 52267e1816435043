// A static_jit argument whose dimension its mesh axes do not divide: a compile error naming the
// dimension, its size and the axes.
#include "tessel/plan/static_plan.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;

struct Program {
  static constexpr MeshAxes mesh{{2, 4}, {"dp", "mp"}};
  static constexpr std::tuple args{Arg<float>{{16, 64}, P("dp")}, Arg<float>{{64, 126}, P(None, "mp")}};
};
constexpr auto plan = static_plan<Program>([](auto const& x, auto const& w) { return matmul(x, w); });
