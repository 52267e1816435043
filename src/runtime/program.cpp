// Recording a jitted body's evaluations and replaying them (runtime/program.hpp).
#include "tessel/runtime/program.hpp"

#include <algorithm>
#include <atomic>
#include <format>
#include <string>
#include <unordered_set>

#include "tessel/expr/manual_scope.hpp"
#include "tessel/plan/plan.hpp"
#include "tessel/runtime/memory_check.hpp"
#include "tessel/runtime/tensor_impl.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/device_placement.hpp"

namespace tessel::detail {

thread_local ProgramRecorder* program_recorder = nullptr;

namespace {
std::atomic<int> recorders{0};                   // recorders alive, on any thread
std::atomic<std::uint64_t> tensors_made{0};      // counted while any is
std::uint64_t made_so_far() { return tensors_made.load(std::memory_order_relaxed); }
}  // namespace

void note_tensor_made() {
  if (recorders.load(std::memory_order_relaxed) > 0) [[unlikely]]
    tensors_made.fetch_add(1, std::memory_order_relaxed);
}

void not_replayable(std::string_view what) {
  if (program_recorder != nullptr && !program_recorder->in_step()) [[unlikely]]
    program_recorder->give_up(what);
}

void note_shard_access() { not_replayable("addressable_shards"); }

std::shared_ptr<TensorImpl const> recorded_reshard(std::shared_ptr<TensorImpl const> const& from,
                                                   NamedSharding const& to) {
  RecordedStep step(from, to);
  std::shared_ptr<TensorImpl const> moved = reshard(*from, to);
  step.made(moved);
  return moved;
}

ProgramRecorder::ProgramRecorder(std::vector<ImplPtr> const& arguments) : previous_(program_recorder) {
  for (std::size_t i = 0; i < arguments.size(); ++i)
    known_.try_emplace(arguments[i].get(), ProgramValue{ProgramValue::From::argument, static_cast<int>(i)});
  program_recorder = this;
  recorders.fetch_add(1, std::memory_order_relaxed);
  made_at_start_ = made_so_far();
}

ProgramRecorder::~ProgramRecorder() {
  recorders.fetch_sub(1, std::memory_order_relaxed);
  program_recorder = previous_;
}

ProgramValue ProgramRecorder::value_of(ImplPtr const& t) {
  auto [it, added] = known_.try_emplace(t.get(), ProgramValue{ProgramValue::From::constant,
                                                              static_cast<int>(program_.constants_.size())});
  if (added) program_.constants_.push_back(t);
  return it->second;
}

void ProgramRecorder::begin_eval(plan::Plan const& plan, StepKernels const& kernels, RunState const& bound) {
  in_step_ = true;
  made_at_step_ = made_so_far();
  if (!why_not_.empty()) return;
  if (active_shard_map_mesh() != nullptr) return give_up("shard_map");
  ProgramStep step;
  step.plan = &plan;
  step.kernels = &kernels;
  step.nodes = bound.inputs.size();
  for (std::size_t node = 0; node < bound.inputs.size(); ++node)
    if (bound.inputs[node]) step.tensors.emplace_back(node, value_of(bound.inputs[node]));
  step.scalars = bound.scalars;
  program_.steps_.push_back(std::move(step));
}

void ProgramRecorder::begin_reshard(ImplPtr const& source, NamedSharding const& to) {
  in_step_ = true;
  made_at_step_ = made_so_far();
  if (!why_not_.empty()) return;
  ProgramStep step;
  step.tensors.emplace_back(0, value_of(source));
  step.reshard_to = to;
  program_.steps_.push_back(std::move(step));
}

void ProgramRecorder::end_step(ImplPtr const& made) {
  in_step_ = false;
  made_in_steps_ += made_so_far() - made_at_step_;
  if (!why_not_.empty()) return;
  made_.push_back(made);
  // A step can hand back a tensor it was given (a reshape's view of an argument): then that is
  // what the later steps read, and a replay finds it the same way.
  known_.try_emplace(made.get(), ProgramValue{ProgramValue::From::step, static_cast<int>(program_.steps_.size()) - 1});
}

void ProgramRecorder::give_up(std::string_view what) {
  if (why_not_.empty()) why_not_ = what;
}

std::optional<Program> ProgramRecorder::finish(std::vector<ImplPtr> const& results) {
  if (!why_not_.empty()) return std::nullopt;
  if (in_step_) {
    give_up("an evaluation that did not finish");
    return std::nullopt;
  }
  if (made_so_far() - made_at_start_ != made_in_steps_) {
    give_up("tensors made on another thread while the body ran");
    return std::nullopt;
  }
  for (auto const& r : results) program_.results_.push_back(value_of(r));
  // Each step's result is dropped after the last step that reads it, as the body's own tensors
  // are when it reassigns them; the body's results are kept.
  auto const n = static_cast<int>(program_.steps_.size());
  std::vector<int> last_read(static_cast<std::size_t>(n));
  for (int k = 0; k < n; ++k) last_read[static_cast<std::size_t>(k)] = k;
  for (int k = 0; k < n; ++k)
    for (auto const& [node, v] : program_.steps_[static_cast<std::size_t>(k)].tensors)
      if (v.from == ProgramValue::From::step) last_read[static_cast<std::size_t>(v.index)] = k;
  for (int j = 0; j < n; ++j) {
    bool const is_result = std::ranges::any_of(
        program_.results_, [j](ProgramValue v) { return v.from == ProgramValue::From::step && v.index == j; });
    if (!is_result) program_.steps_[static_cast<std::size_t>(last_read[static_cast<std::size_t>(j)])].release.push_back(j);
  }
  made_.clear();
  return std::move(program_);
}

std::vector<ImplPtr> Program::run(std::vector<ImplPtr> const& arguments) const {
  if (auto results = graph_->run(*this, arguments)) return std::move(*results);
  return run_steps(arguments);
}

std::vector<ImplPtr> Program::run_steps(std::vector<ImplPtr> const& arguments) const {
  std::vector<ImplPtr> made(steps_.size());
  auto value = [&](ProgramValue v) -> ImplPtr const& {
    switch (v.from) {
      case ProgramValue::From::argument: return arguments[static_cast<std::size_t>(v.index)];
      case ProgramValue::From::step: return made[static_cast<std::size_t>(v.index)];
      case ProgramValue::From::constant: break;
    }
    return constants_[static_cast<std::size_t>(v.index)];
  };
  for (std::size_t k = 0; k < steps_.size(); ++k) {
    ProgramStep const& step = steps_[k];
    if (step.plan == nullptr) {
      made[k] = reshard(*value(step.tensors.front().second), *step.reshard_to);
    } else {
      RunState state(step.nodes);
      for (auto const& [node, v] : step.tensors) state.inputs[node] = state.values[node] = value(v);
      state.scalars = step.scalars;
      made[k] = execute(*step.plan, *step.kernels, state);
    }
    for (int j : step.release) made[static_cast<std::size_t>(j)].reset();
  }
  std::vector<ImplPtr> out;
  for (ProgramValue v : results_) out.push_back(value(v));
  return out;
}

plan::MemoryAnalysis Program::memory_analysis(std::vector<ImplPtr> const& arguments) const {
  plan::MemoryLayout const layout = memory_layout();
  auto const n = static_cast<std::size_t>(device_count());
  std::vector<std::int64_t> live(n, 0), held(n, 0), peak(n, 0);
  std::vector<int> peak_step(n, -1);
  auto add = [&](plan::ValueMemory const& m, int sign) {
    for (std::size_t d = 0; d < std::min(n, m.bytes.size()); ++d) live[d] += sign * m.bytes[d];
  };
  // The arguments and constants, each measured once (not again for each step that reads it) and held once.
  auto measure = [&](std::vector<ImplPtr> const& list) {
    std::vector<plan::ValueMemory> memory;
    memory.reserve(list.size());
    for (auto const& t : list) memory.push_back(t ? held_memory(*t) : plan::ValueMemory{});
    return memory;
  };
  std::vector<plan::ValueMemory> const argument_memory = measure(arguments), constant_memory = measure(constants_);
  std::unordered_set<TensorImpl const*> seen;
  for (std::size_t i = 0; i < arguments.size(); ++i)
    if (arguments[i] && seen.insert(arguments[i].get()).second) add(argument_memory[i], +1);
  for (std::size_t i = 0; i < constants_.size(); ++i)
    if (constants_[i] && seen.insert(constants_[i].get()).second) add(constant_memory[i], +1);
  held = live;
  peak = live;
  struct Made {
    plan::ValueMemory memory;
    bool own = true;  // false: the memory of a value it was given (a view of it)
    Shape shape;
    int dtype_bytes = 0;
  };
  std::vector<Made> made(steps_.size());
  auto memory_of = [&](ProgramValue v) -> plan::ValueMemory const& {
    switch (v.from) {
      case ProgramValue::From::argument: return argument_memory[static_cast<std::size_t>(v.index)];
      case ProgramValue::From::step: return made[static_cast<std::size_t>(v.index)].memory;
      case ProgramValue::From::constant: break;
    }
    return constant_memory[static_cast<std::size_t>(v.index)];
  };
  std::vector<plan::MemoryAnalysis> plans(steps_.size());
  for (std::size_t k = 0; k < steps_.size(); ++k) {
    ProgramStep const& step = steps_[k];
    std::vector<std::int64_t> extra(n, 0);
    Made& result = made[k];
    if (step.plan == nullptr) {  // device_put to another sharding: a new tensor (runtime/reshard.hpp)
      ProgramValue const from = step.tensors.front().second;
      if (from.from == ProgramValue::From::step) {
        result.shape = made[static_cast<std::size_t>(from.index)].shape;
        result.dtype_bytes = made[static_cast<std::size_t>(from.index)].dtype_bytes;
      } else {
        TensorImpl const& t = from.from == ProgramValue::From::argument ? *arguments[static_cast<std::size_t>(from.index)]
                                                                       : *constants_[static_cast<std::size_t>(from.index)];
        result.shape = t.shape;
        result.dtype_bytes = static_cast<int>(size_of(t.dtype));
      }
      result.memory = plan::value_memory(result.shape, result.dtype_bytes, *step.reshard_to, layout, false);
      for (std::size_t d = 0; d < std::min(n, result.memory.bytes.size()); ++d) extra[d] = result.memory.bytes[d];
    } else {
      std::vector<std::optional<plan::ValueMemory>> given(step.nodes);
      for (auto const& [node, v] : step.tensors) given[node] = memory_of(v);
      plans[k] = plan::memory_analysis(*step.plan, layout, given);
      for (auto const& d : plans[k].devices)
        if (static_cast<std::size_t>(d.device) < n) extra[static_cast<std::size_t>(d.device)] = d.peak_bytes - d.argument_bytes;
      result.shape = step.plan->graph.back().shape;
      result.dtype_bytes = static_cast<int>(step.plan->graph.back().dtype_bytes);
      if (plans[k].result_input >= 0) {
        result.own = false;
        result.memory = *given[static_cast<std::size_t>(plans[k].result_input)];
      } else {
        result.memory = plans[k].result;
      }
    }
    for (std::size_t d = 0; d < n; ++d)
      if (live[d] + extra[d] > peak[d]) {
        peak[d] = live[d] + extra[d];
        peak_step[d] = static_cast<int>(k);
      }
    if (result.own) add(result.memory, +1);
    for (int j : step.release)
      if (made[static_cast<std::size_t>(j)].own) add(made[static_cast<std::size_t>(j)].memory, -1);
  }
  plan::MemoryAnalysis m;
  for (std::size_t d = 0; d < n; ++d) {
    if (peak[d] == 0) continue;
    plan::DeviceMemory dm;
    dm.device = static_cast<int>(d);
    dm.argument_bytes = held[d];
    std::vector<int> counted;  // a step's value returned twice is held once
    for (ProgramValue v : results_) {
      if (v.from != ProgramValue::From::step || !made[static_cast<std::size_t>(v.index)].own ||
          std::ranges::find(counted, v.index) != counted.end())
        continue;
      counted.push_back(v.index);
      auto const& r = made[static_cast<std::size_t>(v.index)].memory.bytes;
      dm.output_bytes += d < r.size() ? r[d] : 0;
    }
    dm.peak_bytes = peak[d];
    dm.peak_step = peak_step[d];
    dm.temporary_bytes = std::max<std::int64_t>(0, dm.peak_bytes - dm.argument_bytes - dm.output_bytes);
    if (m.device < 0 || dm.peak_bytes > m.peak_bytes) {
      m.device = dm.device;
      m.peak_bytes = dm.peak_bytes;
      m.peak_step = dm.peak_step;
    }
    m.devices.push_back(dm);
  }
  if (m.peak_step >= 0) {
    auto const& at = plans[static_cast<std::size_t>(m.peak_step)];
    m.peak_label = std::format("step {}", m.peak_step + 1);
    if (steps_[static_cast<std::size_t>(m.peak_step)].plan != nullptr && at.peak_step >= 0)
      m.peak_label += std::format(" (its {})", at.peak_label);
    for (auto const& b : at.largest_live) m.largest_live.push_back({std::format("step {} {}", m.peak_step + 1, b.what), b.bytes});
  }
  // The first result's memory (the only one for a body returning one tensor).
  if (!results_.empty() && results_.front().from == ProgramValue::From::step)
    m.result = made[static_cast<std::size_t>(results_.front().index)].memory;
  return m;
}

std::string Program::explain() const {
  // Distinct plans in the order they first run, each with the steps that run it.
  std::vector<std::pair<plan::Plan const*, std::vector<std::size_t>>> plans;
  std::size_t reshards = 0;
  for (std::size_t k = 0; k < steps_.size(); ++k) {
    if (steps_[k].plan == nullptr) {
      ++reshards;
      continue;
    }
    auto it = std::find_if(plans.begin(), plans.end(), [&](auto const& p) { return p.first == steps_[k].plan; });
    if (it == plans.end()) plans.push_back({steps_[k].plan, {k}});
    else it->second.push_back(k);
  }
  std::string s = std::format("a recorded program: {} step{} ({} evaluation{} of {} distinct plan{}, {} reshard{})\n",
                              steps_.size(), steps_.size() == 1 ? "" : "s", steps_.size() - reshards,
                              steps_.size() - reshards == 1 ? "" : "s", plans.size(), plans.size() == 1 ? "" : "s",
                              reshards, reshards == 1 ? "" : "s");
  GraphStatus const graph = graph_->status();
  if (graph.launches > 0 && graph.why_not.empty())
    s += std::format("replayed as one graph: {} capture{}, {} launch{}\n", graph.captures, graph.captures == 1 ? "" : "s",
                     graph.launches, graph.launches == 1 ? "" : "es");
  else if (!graph.why_not.empty())
    s += std::format("replayed step by step: {}\n", graph.why_not);
  for (std::size_t k = 0; k < steps_.size(); ++k)
    if (steps_[k].plan == nullptr)
      s += std::format("-- step {}: device_put to {}\n", k + 1, to_string(*steps_[k].reshard_to));
  for (std::size_t p = 0; p < plans.size(); ++p) {
    std::string at;
    for (std::size_t k : plans[p].second) at += std::format("{}{}", at.empty() ? "" : ", ", k + 1);
    s += std::format("-- plan {}, run at step{} {}:\n", p + 1, plans[p].second.size() == 1 ? "" : "s", at);
    s += plan::to_string(*plans[p].first, nullptr, placement_note());
  }
  return s;
}

}  // namespace tessel::detail
