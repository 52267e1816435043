#pragma once
// The statically planned programs the compile-time tests check: each a function and its constants
// (mesh axes, argument shapes and specs, output spec) over several meshes (1-D, 2-D both ways,
// 3-D). `dp` is the data-parallel axes of the mesh (none on the 1-D one), `mp` the model axis.
#include <optional>
#include <tuple>

#include "tessel/runtime/static_jit.hpp"
#include "tessel/tessel.hpp"

namespace tessel::test::programs {

struct Mesh1D {
  static constexpr MeshAxes mesh{{8}, {"mp"}};
  static constexpr DimSpec dp = None;
};
struct Mesh2D {
  static constexpr MeshAxes mesh{{2, 4}, {"dp", "mp"}};
  static constexpr DimSpec dp = "dp";
};
struct Mesh2DTall {
  static constexpr MeshAxes mesh{{4, 2}, {"dp", "mp"}};
  static constexpr DimSpec dp = "dp";
};
struct Mesh3D {
  static constexpr MeshAxes mesh{{2, 2, 2}, {"pp", "dp", "mp"}};
  static constexpr DimSpec dp{AxisName("pp"), AxisName("dp")};
};

// Megatron's MLP block: x @ w1 split by columns over mp, gelu, @ w2 split by rows over mp.
inline constexpr auto megatron = [](auto const& x, auto const& w1, auto const& w2) {
  return matmul(gelu(matmul(x, w1)), w2);
};
template <class M>
struct Megatron {
  static constexpr MeshAxes mesh = M::mesh;
  static constexpr std::tuple args{Arg<float>{{16, 64}, P(M::dp)}, Arg<float>{{64, 128}, P(None, "mp")},
                                   Arg<float>{{128, 64}, P("mp")}};
};
// The same with its output split over mp too: the all-reduce becomes a reduce-scatter.
template <class M>
struct MegatronScattered : Megatron<M> {
  static constexpr std::optional<PartitionSpec> out = P(M::dp, "mp");
};

// The same on shapes the mesh does not divide: 15 rows and a hidden dimension of 126 (blocks of
// ceil(n/k), the last devices' short).
template <class M>
struct MegatronUneven {
  static constexpr MeshAxes mesh = M::mesh;
  static constexpr std::tuple args{Arg<float>{{15, 64}, P(M::dp)}, Arg<float>{{64, 126}, P(None, "mp")},
                                   Arg<float>{{126, 64}, P("mp")}};
};

// softmax over a dimension split over mp (its max and sum meet across devices).
inline constexpr auto softmax_rows = [](auto const& x) { return softmax(x * 0.5f); };
template <class M>
struct Softmax {
  static constexpr MeshAxes mesh = M::mesh;
  static constexpr std::tuple args{Arg<float>{{16, 64}, P(M::dp, "mp")}};
};

// A chain of sharding constraints (each a reshard), ending replicated.
inline constexpr auto reshard_chain = [](auto const& x) {
  auto a = with_sharding_constraint(x * 2.0f, P("mp"));
  auto b = with_sharding_constraint(a + 1.0f, P(None, "mp"));
  return with_sharding_constraint(exp(b), P());
};
template <class M>
struct ReshardChain {
  static constexpr MeshAxes mesh = M::mesh;
  static constexpr std::tuple args{Arg<float>{{16, 64}, P(M::dp)}};
};

// dot_general with a batch dimension (over dp) and a contraction split over mp.
inline constexpr auto batched_dot = [](auto const& a, auto const& b) {
  return dot_general(a, b, DotDims{{2}, {1}, {0}, {0}});
};
template <class M>
struct BatchedDot {
  static constexpr MeshAxes mesh = M::mesh;
  static constexpr std::tuple args{Arg<float>{{8, 16, 32}, P(M::dp, None, "mp")}, Arg<float>{{8, 32, 24}, P(M::dp, "mp")}};
};

// Attention heads by views: a projection [b, s, h*k] split over mp, reshaped to [b, s, h, k] and
// transposed to [b, h, s, k] (each device keeps its heads: no data moves).
inline constexpr auto heads = [](auto const& x, auto const& wq) {
  return transpose(reshape(matmul(x, wq), {4, 8, 8, 4}), {0, 2, 1, 3});
};
template <class M>
struct Heads {
  static constexpr MeshAxes mesh = M::mesh;
  static constexpr std::tuple args{Arg<float>{{4, 8, 32}, P(M::dp)}, Arg<float>{{32, 32}, P(None, "mp")}};
};

// A transformer layer: layer norm, attention with its heads over mp, the output projection, a
// residual, layer norm, the Megatron MLP and a residual. x[batch, seq, model].
inline constexpr auto transformer = [](auto const& x, auto const& wq, auto const& wk, auto const& wv, auto const& wo,
                                       auto const& g1, auto const& b1, auto const& w1, auto const& w2, auto const& g2,
                                       auto const& b2) {
  auto h = layer_norm(x, g1, b1);
  DotDims const project{{2}, {0}, {}, {}};                  // [b,s,d] x [d,h,k] -> [b,s,h,k]
  auto q = dot_general(h, wq, project);
  auto k = dot_general(h, wk, project);
  auto v = dot_general(h, wv, project);
  auto scores = dot_general(q, k, DotDims{{3}, {3}, {0, 2}, {0, 2}});  // [b,h,s,t]
  auto p = softmax(scores * 0.5f);
  auto o = dot_general(p, v, DotDims{{3}, {1}, {0, 1}, {0, 2}});       // [b,h,s,k]
  auto x1 = x + dot_general(o, wo, DotDims{{1, 3}, {0, 1}, {}, {}});   // [b,s,d]
  return x1 + matmul(gelu(matmul(layer_norm(x1, g2, b2), w1)), w2);
};
template <class M>
struct Transformer {
  static constexpr MeshAxes mesh = M::mesh;
  static constexpr std::tuple args{
      Arg<float>{{4, 8, 32}, P(M::dp)},          Arg<float>{{32, 8, 4}, P(None, "mp")},
      Arg<float>{{32, 8, 4}, P(None, "mp")},     Arg<float>{{32, 8, 4}, P(None, "mp")},
      Arg<float>{{8, 4, 32}, P("mp")},           Arg<float>{{32}, P()},
      Arg<float>{{32}, P()},                     Arg<float>{{32, 64}, P(None, "mp")},
      Arg<float>{{64, 32}, P("mp")},             Arg<float>{{32}, P()},
      Arg<float>{{32}, P()}};
};

}  // namespace tessel::test::programs
