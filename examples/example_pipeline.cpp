// Pipeline parallelism with shard_map, as in JAX's shard_map pipelining example: a stack of 4 MLP
// stages on a (2, 4) dp x pp mesh. The stages' weights are stacked along a leading dimension split
// over 'pp' (each stage's devices hold their stage); the batch is split over 'dp' and, on each dp
// group, into microbatches that flow through the stages (GPipe: fill, steady, drain), passed from
// stage to stage by a ppermute over 'pp'.
//
//   python:  W1 = jax.device_put(W1, NamedSharding(mesh, P('pp', None, None)))   # (4, 256, 1024)
//            y = spmd_pipeline(W1, W2, x)                     # shard_map(..., in_specs=(P('pp'), ...))
#include <cstdio>
#include <iostream>

#include "tessel/runtime/pipeline.hpp"
#include "tessel/tessel.hpp"

int main(int argc, char** argv) {
  using namespace tessel;
  ScopeGuard guard(argc, argv);
  set_device_count(8);
  constexpr std::int64_t batch = 64, model = 256, hidden = 1024;
  constexpr int stages = 4, microbatches = 8;

  auto mesh = make_mesh({2, stages}, {"dp", "pp"});
  Tensor<float> x = random::normal(PRNGKey(0), {batch, model}, NamedSharding(mesh, P("dp", None)));
  Tensor<float> w1 = random::normal(PRNGKey(1), {stages, model, hidden}, NamedSharding(mesh, P("pp", None, None))) *
                     0.0625f;
  Tensor<float> w2 = random::normal(PRNGKey(2), {stages, hidden, model}, NamedSharding(mesh, P("pp", None, None))) *
                     0.03125f;

  // One stage, written for one device's block: its weights (the stage dimension dropped) and a
  // microbatch of activations; a residual MLP.
  auto stage = [](auto const& a, auto const& b, auto const& h) { return matmul(relu(matmul(h, a)), b) + h; };
  auto run = pipeline(stage, mesh, {P("pp", None, None), P("pp", None, None)}, P("dp", None),
                      {.axis = "pp", .microbatches = microbatches});

  std::cout << "mesh " << to_string(mesh) << "; stage weights W1 " << to_string(w1.shape()) << " on "
            << to_string(w1.sharding().spec()) << "; batch " << to_string(x.shape()) << " on "
            << to_string(x.sharding().spec()) << ", " << microbatches << " microbatches of " << batch / 2 / microbatches
            << " rows per dp group\n\nThe schedule (which stage runs which microbatch at each step):\n"
            << run.schedule().to_string();

  Tensor<float> y = run(w1, w2, x);  // the first call also plans each step's expressions
  y = run(w1, w2, x);
  std::printf("\nmeasured bubble (step times weighted by idle stages): %.3f; ideal %.3f\n",
              run.measured_bubble_fraction(), run.schedule().bubble_fraction());

  // The same stages one after another on one device.
  Tensor<float> h = device_put(x.to_host(), x.shape());
  auto all_w1 = w1.to_host(), all_w2 = w2.to_host();
  for (int s = 0; s < stages; ++s) {
    auto a = device_put(std::vector<float>(all_w1.begin() + s * model * hidden, all_w1.begin() + (s + 1) * model * hidden),
                        {model, hidden});
    auto b = device_put(std::vector<float>(all_w2.begin() + s * hidden * model, all_w2.begin() + (s + 1) * hidden * model),
                        {hidden, model});
    h = Tensor<float>(stage(a, b, h));
  }
  auto got = y.to_host(), want = h.to_host();
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, double(std::abs(got[i] - want[i])));
  std::printf("result %s on %s; largest difference from the unpipelined stages: %.2e\n", to_string(y.shape()).c_str(),
              to_string(y.sharding().spec()).c_str(), worst);
  return 0;
}
