#pragma once
// GPT-2's blocks as pipeline stages over a mesh axis 'pp' (runtime/pipeline.hpp, GPipe's schedule):
// stage s runs blocks [s L/p, (s + 1) L/p) on its microbatch, with Megatron tensor parallelism over
// 'mp' inside it, written for one device's blocks as a shard_map body is (a psum over mp after
// attention and after the MLP), and data parallelism over 'dp'. The embeddings and the logits stay
// outside the pipeline, on the whole mesh, as models/gpt2.hpp plans them.
#include <array>
#include <cstdint>
#include <format>
#include <tuple>
#include <utility>
#include <vector>

#include "gpt2.hpp"
#include "tessel/runtime/pipeline.hpp"

namespace tessel::models {

namespace gpt2 {

// One stage: its blocks, each weight stacked with one entry per block of the stage (the pipeline
// has dropped the stage dimension), then the microbatch (rows, seq, n_embd).
struct Stage {
  double epsilon = 1e-5;
  std::int64_t blocks = 1;

  template <class... A>
  auto operator()(A const&... args) const {
    static_assert(sizeof...(A) == 17, "a GPT-2 stage takes the 16 stacked block weights and the activations");
    using X = std::remove_cvref_t<std::tuple_element_t<16, std::tuple<A...>>>;
    std::array<X const*, 17> const in{&args...};
    X x = *in[16];
    for (std::int64_t j = 0; j < blocks; ++j) {
      auto w = [&](std::size_t k) {  // block j's weight k: entry j of its stack
        Shape const& stacked = in[k]->shape();
        Shape rest;
        for (int d = 1; d < stacked.rank(); ++d) rest.push_back(stacked[d]);
        return X(reshape(slice_in_dim(*in[k], j, j + 1, 0), rest));
      };
      auto heads = attention_heads(x, w(0), w(1), w(2), w(3), w(4), w(5), w(6), w(7), w(8), epsilon);
      x = X(x + (lax::psum(heads, "mp") + w(9)));
      x = X(x + (lax::psum(mlp_hidden(x, w(10), w(11), w(12), w(13), w(14), epsilon), "mp") + w(15)));
    }
    return x;
  }
};

}  // namespace gpt2

// A GPT-2's blocks laid out for a pipeline over 'pp' of a mesh with axes dp, pp and mp: each block
// weight stacked (stages, blocks per stage, ...), the stage dimension split over pp and the rest as
// Gpt2Shardings lays out one block's weight.
template <class T>
struct Gpt2Pipeline {
  std::vector<Tensor<T>> weights;  // in Gpt2Block's order
  Pipelined<gpt2::Stage> run;
};

// The stacked weights of `m` (on a mesh with axes dp, pp and mp) and the pipeline that runs them in
// `microbatches` microbatches per dp group. The number of blocks must divide by the pp size.
template <class T>
Gpt2Pipeline<T> pipeline_stages(Gpt2<T> const& m, int microbatches) {
  MeshAxes const& axes = m.mesh.axes();
  auto const pp = axes.find(std::string_view("pp"));
  if (!pp || !axes.find(std::string_view("dp")) || !axes.find(std::string_view("mp")))
    throw Error(std::format("pipeline_stages: the model's mesh {} needs axes named dp, pp and mp", to_string(m.mesh)));
  std::int64_t const stages = axes.size(*pp);
  std::int64_t const layers = m.config.layers;
  if (layers % stages != 0)
    throw Error(std::format("pipeline_stages: {} blocks do not split into {} stages over 'pp' of equal length", layers,
                            stages));
  std::vector<PartitionSpec> const specs{
      P("pp", None, None),           P("pp", None, None),       P("pp", None, None, "mp", None),
      P("pp", None, None, "mp", None), P("pp", None, None, "mp", None), P("pp", None, "mp", None),
      P("pp", None, "mp", None),     P("pp", None, "mp", None), P("pp", None, "mp", None, None),
      P("pp", None, None),           P("pp", None, None),       P("pp", None, None),
      P("pp", None, None, "mp"),     P("pp", None, "mp"),       P("pp", None, "mp", None),
      P("pp", None, None)};
  auto fields = [](Gpt2Block<T> const& b) {
    return std::array{&b.ln1_g, &b.ln1_b, &b.wq,   &b.wk,   &b.wv,   &b.bq,   &b.bk,   &b.bv,
                      &b.wo,    &b.bo,    &b.ln2_g, &b.ln2_b, &b.w_fc, &b.b_fc, &b.w_proj, &b.b_proj};
  };
  std::vector<Tensor<T>> weights;
  for (std::size_t k = 0; k < specs.size(); ++k) {
    // Blocks in order are stage-major: block l is entry l % (L / p) of stage l / (L / p).
    std::vector<T> host;
    for (auto const& b : m.blocks) {
      auto part = process_allgather(*fields(b)[k]);  // (to_host, when one process holds every device)
      host.insert(host.end(), part.begin(), part.end());
    }
    Shape shape{stages, layers / stages};
    for (std::int64_t d : fields(m.blocks.front())[k]->shape()) shape.push_back(d);
    weights.push_back(device_put(host, shape, NamedSharding(m.mesh, specs[k])));
  }
  gpt2::Stage stage{m.config.epsilon, layers / stages};
  return {std::move(weights),
          pipeline(stage, m.mesh, specs, P("dp", None, None), {.axis = "pp", .microbatches = microbatches})};
}

// The forward with the blocks pipelined: the embeddings, the pipeline, then the logits.
template <class T>
Tensor<T> forward(Gpt2<T> const& m, Gpt2Pipeline<T> const& stages, Tensor<std::int32_t> const& ids) {
  static auto const embed = gpt2::embed();
  static auto const logits = gpt2::logits();
  Tensor<std::int32_t> placed = device_put(ids, NamedSharding(m.mesh, P("dp")));
  Tensor<T> x = embed(m.wte, m.wpe, placed);
  x = [&]<std::size_t... K>(std::index_sequence<K...>) {
    return stages.run(stages.weights[K]..., x);
  }(std::make_index_sequence<16>{});
  return logits(x, m.lnf_g, m.lnf_b, m.wte, m.config.epsilon);
}

}  // namespace tessel::models
