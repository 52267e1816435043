// A static_jit function whose GEMM contracts dimensions of different sizes: a compile error naming
// both dimensions and their sizes, as the run-time check words it.
#include "tessel/plan/static_plan.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;

struct Program {
  static constexpr MeshAxes mesh{{2, 4}, {"dp", "mp"}};
  static constexpr std::tuple args{Arg<float>{{16, 64}, P("dp")}, Arg<float>{{32, 128}, P(None, "mp")}};
};
constexpr auto plan = static_plan<Program>([](auto const& x, auto const& w) { return matmul(x, w); });
