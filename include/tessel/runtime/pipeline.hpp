#pragma once
// Pipeline parallelism over a mesh axis, on shard_map: GPipe's forward schedule (fill, steady,
// drain) as in JAX's shard_map pipelining examples. One stage function is applied to stage-stacked
// weights (each weight's leading dimension has one entry per stage and is split over the pipeline
// axis, so each stage's devices hold their stage's weights); the batch is split into microbatches,
// and at step t stage s runs microbatch t - s, then passes its activations to stage s + 1 with a
// ppermute. The other mesh axes compose: the batch may be split over 'dp' (each dp group runs its
// own pipeline), and the stage function may split its weights over 'mp' and psum over it.
//
// Every device computes at every step (SPMD): a stage with no microbatch yet (or any more) computes
// on what it holds and its result is dropped. That idle work is the bubble, (p - 1) / (m + p - 1)
// of the steps for p stages and m microbatches. The result comes from the last stage, replicated
// over the pipeline axis (a psum of it masked to the last stage), laid out as the input is.
//
// Each device's rows of the batch are split into m microbatches of ceil(rows / m) rows, the last
// ones short or empty (the uneven rule of shardings). A short microbatch is filled up with zero
// rows inside the pipeline, so every stage sees one shape; the results of those rows are dropped
// before the result is assembled. Stages must treat rows independently (as pipelining the batch
// assumes: a stage that mixes rows would already see each microbatch alone).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "tessel/runtime/shard_map.hpp"

namespace tessel {

struct PipelineOptions {
  AxisName axis{"pp"};   // the mesh axis the stages are laid along
  int microbatches = 1;  // m: each device's rows of the batch split into m microbatches (the last may be short)
};

// Which microbatch each stage runs at each step of GPipe's forward schedule.
struct PipelineSchedule {
  int stages = 1;
  int microbatches = 1;

  [[nodiscard]] int steps() const { return microbatches + stages - 1; }
  // The microbatch stage `stage` runs at step `step`, or -1 when it idles (the bubble).
  [[nodiscard]] int microbatch(int step, int stage) const {
    int k = step - stage;
    return k >= 0 && k < microbatches ? k : -1;
  }
  // (p - 1) / (m + p - 1): the share of stage-steps that idle.
  [[nodiscard]] double bubble_fraction() const { return static_cast<double>(stages - 1) / steps(); }
  // A table: one row per step, one column per stage ("mb3" or "-"), then the bubble fraction.
  [[nodiscard]] std::string to_string() const;
};

namespace detail {
// Stage weights: the local block of a weight whose leading (stage) dimension is split over the
// pipeline axis has one stage's entry; it is given to the stage function without that dimension.
ImplPtr drop_stage_dimension(ImplPtr const& local, std::size_t weight);
// Rows [start, stop) of every device's block as a block of `rows` rows: a view when they are
// that many, else a copy filled up with zero rows; and blocks concatenated along rows.
ImplPtr block_rows(ImplPtr const& local, std::int64_t start, std::int64_t stop, std::int64_t rows);
ImplPtr concatenate_block_rows(std::vector<ImplPtr> const& parts);
// The pipeline axis's size on `mesh`, and the checks of the weights' specs (naming the weight,
// its spec and the axis) and of the microbatch count.
int pipeline_stages(Mesh const& mesh, PipelineOptions const& options, std::vector<PartitionSpec> const& weight_specs,
                    PartitionSpec const& x_spec);
void check_microbatches(Shape const& block, PipelineOptions const& options, PartitionSpec const& x_spec);
void check_stage_result(Shape const& got, Shape const& want);
double seconds_since(std::chrono::steady_clock::time_point start);  // after every device's work
}  // namespace detail

template <class Stage>
class Pipelined {
 public:
  Pipelined(Stage stage, Mesh mesh, std::vector<PartitionSpec> weight_specs, PartitionSpec x_spec,
            PipelineOptions options)
      : stage_(std::move(stage)),
        mesh_(std::move(mesh)),
        weight_specs_(std::move(weight_specs)),
        x_spec_(std::move(x_spec)),
        options_(options),
        schedule_{detail::pipeline_stages(mesh_, options_, weight_specs_, x_spec_), options_.microbatches},
        step_seconds_(std::make_shared<std::vector<double>>()) {}

  // Runs the pipeline: the stage weights (as many as weight_specs), then the batch.
  template <class... Args>
  auto operator()(Args const&... args) const {
    detail::not_replayable("a pipeline");  // it times its steps and keeps them (step_seconds)
    std::vector<PartitionSpec> in = weight_specs_;
    in.push_back(x_spec_);
    auto body = [self = this](auto const&... locals) { return self->run(std::forward_as_tuple(locals...)); };
    return shard_map(body, mesh_, std::move(in), x_spec_)(args...);
  }

  [[nodiscard]] PipelineSchedule const& schedule() const { return schedule_; }
  // Seconds each step of the last call took (every device's work finished), in order.
  [[nodiscard]] std::vector<double> const& step_seconds() const { return *step_seconds_; }
  // The bubble measured in the last call: each step's time weighted by the share of its stages
  // that idled, over the whole time.
  [[nodiscard]] double measured_bubble_fraction() const {
    double idle = 0, total = 0;
    for (int t = 0; t < static_cast<int>(step_seconds_->size()); ++t) {
      int active = 0;
      for (int s = 0; s < schedule_.stages; ++s) active += schedule_.microbatch(t, s) >= 0;
      double dt = (*step_seconds_)[static_cast<std::size_t>(t)];
      idle += dt * (schedule_.stages - active) / schedule_.stages;
      total += dt;
    }
    return total > 0 ? idle / total : 0;
  }

 private:
  template <class Locals>
  auto run(Locals const& locals) const {
    constexpr std::size_t weights = std::tuple_size_v<Locals> - 1;
    auto const& x = std::get<weights>(locals);
    using T = typename std::remove_cvref_t<decltype(x)>::value_type;
    detail::check_microbatches(x.shape(), options_, x_spec_);
    int const p = schedule_.stages, m = schedule_.microbatches;
    std::int64_t const batch = x.shape()[0], rows = (batch + m - 1) / m;
    auto real = [&](int k) { return std::clamp<std::int64_t>(batch - k * rows, 0, rows); };
    auto stage_weights = [&]<std::size_t... I>(std::index_sequence<I...>) {
      return std::make_tuple(
          Tensor<typename std::remove_cvref_t<std::tuple_element_t<I, Locals>>::value_type>(
              detail::drop_stage_dimension(std::get<I>(locals).impl_ptr(), I))...);
    }(std::make_index_sequence<weights>{});
    Tensor<std::int32_t> stage = lax::axis_index(DimSpec(options_.axis));
    std::vector<std::pair<int, int>> next;  // stage s passes its activations to s + 1
    for (int s = 0; s + 1 < p; ++s) next.emplace_back(s, s + 1);
    auto microbatch = [&](int k) {
      return Tensor<T>(detail::block_rows(x.impl_ptr(), k * rows, k * rows + real(k), rows));
    };
    Tensor<T> state = microbatch(0);
    std::vector<detail::ImplPtr> outputs(static_cast<std::size_t>(m));
    step_seconds_->clear();
    for (int t = 0; t < schedule_.steps(); ++t) {
      auto start = std::chrono::steady_clock::now();
      // Stage 0 takes microbatch t while there is one; the others what the stage before passed.
      Tensor<T> input = t < m ? Tensor<T>(where(equal(stage, 0), microbatch(t), state)) : state;
      Tensor<T> out = std::apply([&](auto const&... w) { return Tensor<T>(stage_(w..., input)); }, stage_weights);
      detail::check_stage_result(out.shape(), input.shape());
      if (int const k = t - (p - 1); k >= 0) outputs[static_cast<std::size_t>(k)] = detail::block_rows(out.impl_ptr(), 0, real(k), real(k));
      if (t + 1 < schedule_.steps()) state = lax::ppermute(out, DimSpec(options_.axis), next);
      step_seconds_->push_back(detail::seconds_since(start));
    }
    Tensor<T> last(detail::concatenate_block_rows(outputs));
    // Only the last stage's blocks are the results: masked there, summed over the axis.
    return lax::psum(where(equal(stage, p - 1), last, 0), DimSpec(options_.axis));  // (a weak 0: T whatever T is)
  }

  Stage stage_;
  Mesh mesh_;
  std::vector<PartitionSpec> weight_specs_;
  PartitionSpec x_spec_;
  PipelineOptions options_;
  PipelineSchedule schedule_;
  std::shared_ptr<std::vector<double>> step_seconds_;
};

// A pipeline of `stage` over options.axis of `mesh`: weight k is laid out as weight_specs[k] (its
// spec's first entry must be the pipeline axis alone), the batch as x_spec (its first dimension
// is the batch; it must not be split over the pipeline axis).
template <class Stage>
Pipelined<Stage> pipeline(Stage stage, Mesh mesh, std::vector<PartitionSpec> weight_specs, PartitionSpec x_spec,
                          PipelineOptions options) {
  return Pipelined<Stage>(std::move(stage), std::move(mesh), std::move(weight_specs), std::move(x_spec), options);
}

}  // namespace tessel
