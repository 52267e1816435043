// A statically planned function that does not fit its memory budget: a compile error naming the
// plan's peak per device, where it is reached, and the budget.
#include "tessel/plan/static_plan.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;

struct Program {
  static constexpr MeshAxes mesh{{2, 4}, {"dp", "mp"}};
  static constexpr std::tuple args{Arg<float>{{16, 64}, P("dp")}, Arg<float>{{64, 128}, P(None, "mp")}};
};
TESSEL_STATIC_ASSERT_FITS(static_plan<Program>([](auto const& x, auto const& w) { return matmul(x, w); }), 1_KiB);
