// A static_jit output sharding the result cannot have: a compile error naming the spec, the
// result's shape and the dimension.
#include "tessel/plan/static_plan.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;

struct Program {
  static constexpr MeshAxes mesh{{2, 4}, {"dp", "mp"}};
  static constexpr std::tuple args{Arg<float>{{16, 64}, P("dp")}, Arg<float>{{64, 6}, P()}};
  static constexpr std::optional<PartitionSpec> out = P(None, "mp", "dp");
};
constexpr auto plan = static_plan<Program>([](auto const& x, auto const& w) { return matmul(x, w); });
