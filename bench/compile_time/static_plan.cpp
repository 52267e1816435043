// What static_plan costs the compiler (bench/compile_time/measure.py compiles this file once per
// program and reports the seconds and the compiler's peak memory): PROGRAM is megatron,
// transformer (tests/compile_time/programs.hpp, on the 2x4 mesh) or chain, an N-op elementwise
// chain (CHAIN_OPS), to see how the cost grows with the program; none plans nothing (the
// baseline: parsing the headers).
#include "compile_time/programs.hpp"

using namespace tessel;
using namespace tessel::test::programs;

#define PROGRAM_none 0
#define PROGRAM_megatron 1
#define PROGRAM_transformer 2
#define PROGRAM_chain 3
#define CAT(a, b) a##b
#define WHICH(p) CAT(PROGRAM_, p)

#if WHICH(PROGRAM) == PROGRAM_megatron
constexpr auto made = static_plan<Megatron<Mesh2D>>(megatron);
static_assert(made.count(Collective::all_reduce, "mp") == 1);
#elif WHICH(PROGRAM) == PROGRAM_transformer
constexpr auto made = static_plan<Transformer<Mesh2D>>(transformer);
static_assert(made.count(Collective::all_gather) == 0);
#elif WHICH(PROGRAM) == PROGRAM_chain
template <int N>
constexpr auto chain(auto const& x) {
  if constexpr (N == 0) return x * 1.0f;
  else return chain<N - 1>(x) * 1.001f;
}
struct Chain {
  static constexpr MeshAxes mesh{{2, 4}, {"dp", "mp"}};
  static constexpr std::tuple args{Arg<float>{{16, 64}, P("dp", "mp")}};
};
constexpr auto made = static_plan<Chain>([](auto const& x) { return chain<CHAIN_OPS - 1>(x); });
static_assert(made.kernels() == 1);
#endif
