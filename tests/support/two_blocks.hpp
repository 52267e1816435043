#pragma once
// A jitted body as a model's forward records it (runtime/program.hpp): two blocks of a small MLP,
// each its own evaluation, a reshard between them and a scalar argument.
#include <cstdint>
#include <string>

#include "tessel/tessel.hpp"

namespace tessel::test {

inline Tensor<float> draw(Shape const& shape, NamedSharding const& s, std::uint32_t seed) {
  return random::normal(PRNGKey(seed), shape, s);
}

struct TwoBlocks {
  int* runs;
  NamedSharding middle;
  Tensor<float> operator()(Tensor<float> const& x, Tensor<float> const& w1, Tensor<float> const& w2, float scale) const {
    ++*runs;
    Tensor<float> h = relu(x.matmul(w1)) * scale;
    h = device_put(h, middle);
    Tensor<float> y = tanh(h.matmul(w2)) + x;
    return y;
  }
};

// TwoBlocks jitted on a mesh (rows over its first axis, the middle and w2 over its last), with
// its arguments: f() calls it, explain() explains that call.
struct JittedTwoBlocks {
  int runs = 0;
  TwoBlocks body;
  decltype(jit(std::declval<TwoBlocks>())) f;
  Tensor<float> x, w1, w2;
  explicit JittedTwoBlocks(Mesh const& mesh)
      : body{&runs, NamedSharding(mesh, P(None, mesh.axes().name(mesh.axes().num_axes() - 1)))}, f(jit(body)),
        x(draw({16, 8}, NamedSharding(mesh, P(mesh.axes().name(0))), 1)),
        w1(draw({8, 16}, NamedSharding(mesh, P()), 2)),
        w2(draw({16, 8}, NamedSharding(mesh, P(mesh.axes().name(mesh.axes().num_axes() - 1))), 3)) {}
  JittedTwoBlocks(JittedTwoBlocks const&) = delete;
  JittedTwoBlocks& operator=(JittedTwoBlocks const&) = delete;
  Tensor<float> operator()() const { return f(x, w1, w2, 1.0f); }
  [[nodiscard]] std::string explain() const { return f.explain(x, w1, w2, 1.0f); }
};

}  // namespace tessel::test
