// The pipeline's run-time pieces (runtime/pipeline.hpp): the schedule's table, per-device row
// ranges and their concatenation, and the checks of the layout and the microbatch count.
#include "tessel/runtime/pipeline.hpp"
#include "tessel/runtime/block_copy.hpp"

#include <format>

#include "tessel/core/error.hpp"
#include "tessel/runtime/device.hpp"

namespace tessel {

std::string PipelineSchedule::to_string() const {
  std::string s = "step";
  for (int st = 0; st < stages; ++st) s += std::format("  stage{:<2}", st);
  s += "\n";
  for (int t = 0; t < steps(); ++t) {
    s += std::format("{:>4}", t);
    for (int st = 0; st < stages; ++st) {
      int k = microbatch(t, st);
      s += k < 0 ? std::string("  -      ") : std::format("  mb{:<5}", k);
    }
    s += "\n";
  }
  return s + std::format("bubble fraction (p - 1) / (m + p - 1) = {} / {} = {:.3f}\n", stages - 1, steps(),
                         bubble_fraction());
}

namespace detail {

ImplPtr drop_stage_dimension(ImplPtr const& local, std::size_t weight) {
  if (local->shape.rank() < 1 || local->shape[0] != 1)
    throw Error(std::format("pipeline: weight {}'s block on each device has shape {}; its first dimension must hold "
                            "one stage (the stages stacked along it, split over the pipeline axis)",
                            weight, to_string(local->shape)));
  Shape shape;
  for (std::size_t d = 1; d < local->shape.size(); ++d) shape.push_back(local->shape[d]);
  auto t = std::make_shared<TensorImpl>(*local);
  t->shape = shape;
  for (auto& s : t->shards) s.index = Box::whole(shape);
  return t;
}

ImplPtr block_rows(ImplPtr const& local, std::int64_t start, std::int64_t stop, std::int64_t rows) {
  Shape shape = local->shape;
  std::int64_t const row = shape[0] ? shape.num_elements() / shape[0] * static_cast<std::int64_t>(size_of(local->dtype)) : 0;
  shape[0] = rows;
  if (stop - start < rows) {
    // A short microbatch: its rows then zero rows, in new memory (the stage sees whole microbatches).
    auto t = TensorImpl::allocate(shape, local->dtype, local->sharding);
    t->varying = local->varying;
    std::size_t const real = static_cast<std::size_t>((stop - start) * row);
    for (std::size_t pos : local_positions(*t)) {
      auto& dst = t->shards[pos];
      Device const& d = device(dst.device);
      fill_bytes(d, dst.bytes.data() + real, dst.bytes.size() - real, std::byte{0});
      copy_bytes(d, dst.bytes.data(), local->shards[pos].bytes.data() + start * row, real);
    }
    return t;
  }
  auto t = std::make_shared<TensorImpl>(*local);
  t->shape = shape;
  for (auto& s : t->shards) {
    s.index = Box::whole(shape);
    if (s.addressable)  // the rows are contiguous in the block: a view of them, sharing its memory
      s.bytes = Kokkos::subview(s.bytes, std::pair<std::int64_t, std::int64_t>(start * row, stop * row));
  }
  return t;
}

ImplPtr concatenate_block_rows(std::vector<ImplPtr> const& parts) {
  ImplPtr const& first = parts.front();
  Shape shape = first->shape;
  shape[0] = 0;
  for (auto const& p : parts) shape[0] += p->shape[0];
  auto out = TensorImpl::allocate(shape, first->dtype, first->sharding);
  for (std::size_t pos : local_positions(*out)) {
    auto& dst = out->shards[pos];
    std::size_t offset = 0;
    for (auto const& p : parts) {
      auto const& src = p->shards[pos].bytes;
      copy_bytes(device(dst.device), dst.bytes.data() + offset, src.data(), src.size());
      offset += src.size();
    }
  }
  std::uint32_t varying = 0;
  for (auto const& p : parts) varying |= p->varying;
  out->varying = varying;
  return out;
}

int pipeline_stages(Mesh const& mesh, PipelineOptions const& options, std::vector<PartitionSpec> const& weight_specs,
                    PartitionSpec const& x_spec) {
  auto axis = mesh.axes().find(options.axis.view());
  if (!axis)
    throw Error(std::format("pipeline: the mesh {} has no axis '{}' to lay the stages along", to_string(mesh.axes()),
                            options.axis.view()));
  if (options.microbatches < 1)
    throw Error(std::format("pipeline: {} microbatches; give at least 1", options.microbatches));
  for (std::size_t k = 0; k < weight_specs.size(); ++k) {
    auto const& spec = weight_specs[k];
    if (spec.size() == 0 || spec[0].axes().size() != 1 || spec[0].axes()[0].view() != options.axis.view())
      throw Error(std::format("pipeline: weight {} is laid out {}; its first dimension stacks the stages and must be "
                              "split over the pipeline axis '{}' alone",
                              k, to_string(spec), options.axis.view()));
  }
  for (auto const& dim : x_spec)
    for (auto const& name : dim.axes())
      if (name.view() == options.axis.view())
        throw Error(std::format("pipeline: the batch is laid out {}, split over the pipeline axis '{}'; every stage "
                                "sees the whole batch (split it over another axis, such as 'dp')",
                                to_string(x_spec), options.axis.view()));
  return mesh.axes().size(*axis);
}

void check_microbatches(Shape const& block, PipelineOptions const& options, PartitionSpec const& x_spec) {
  if (block.rank() < 1)
    throw Error(std::format("pipeline: each device's block of the batch (laid out {}) is a scalar; the batch needs a "
                            "first dimension to split into {} microbatches",
                            to_string(x_spec), options.microbatches));
}

void check_stage_result(Shape const& got, Shape const& want) {
  if (got != want)
    throw Error(std::format("pipeline: the stage function turned a microbatch of shape {} into shape {}; a stage "
                            "must keep its activations' shape, which the next stage takes",
                            to_string(want), to_string(got)));
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  fence_all_devices();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace detail
}  // namespace tessel
