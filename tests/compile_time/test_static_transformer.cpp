// A transformer layer planned by the compiler (tests/compile_time/programs.hpp): its own file, as
// it is the slowest plan to make (a tree of some 1200 nodes: the expression repeats the layer
// norm under Q, K and V and the attention under both uses of the residual).
#include <catch2/catch_test_macros.hpp>

#include "compile_time/programs.hpp"
#include "compile_time/static_checks.hpp"

using namespace tessel;
using namespace tessel::test::programs;
using plan::Collective;

// Attention's heads and the MLP over mp: the output projection and the MLP's second GEMM each end
// in an all-reduce over mp, and nothing else communicates; each value is made once however often
// the tree repeats it (13 kernels: the first norm, Q, K, the scores, softmax, V, the heads' output,
// the projection, the residual with the second norm, the MLP's two GEMMs and gelu, the residual),
// and the result keeps the input's rows over dp.
template <class M>
constexpr bool transformer_ok() {
  constexpr auto p = static_plan<Transformer<M>>(transformer);
  return p.collectives() == 2 && p.count(Collective::all_reduce, "mp") == 2 && !p.gathers_an_argument() &&
         p.kernels() == 13 && p.out_is(P(M::dp));
}
static_assert(transformer_ok<Mesh2D>() && transformer_ok<Mesh3D>());

// Its memory, known to the compiler: each device's peak (24,064 bytes on the 2-D mesh, 31,232 on
// the 3-D one, whose 'mp' is smaller), checked as a user checks a budget; the runs below check it
// against the run-time analysis.
TESSEL_STATIC_ASSERT_FITS(static_plan<Transformer<Mesh2D>>(transformer), 32_KiB);
TESSEL_STATIC_ASSERT_FITS(static_plan<Transformer<Mesh3D>>(transformer), 32_KiB);
static_assert(static_plan<Transformer<Mesh2D>>(transformer).peak_bytes_per_device() > 16 * 1024);

TEST_CASE("a transformer layer planned by the compiler runs as the run-time plan", "[compile_time]") {
  SECTION("2-D") { test::check_static_program<Transformer<Mesh2D>>(transformer, make_mesh(Mesh2D::mesh)); }
  SECTION("3-D") { test::check_static_program<Transformer<Mesh3D>>(transformer, make_mesh(Mesh3D::mesh)); }
}
