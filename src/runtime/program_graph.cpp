// A recorded program's graph: when it is captured, what it reads in place, what it copies
// (runtime/program_graph.hpp).
#include "tessel/runtime/program_graph.hpp"

#include <exception>

#include "tessel/runtime/block_copy.hpp"
#include "tessel/runtime/donate.hpp"
#include "tessel/runtime/program.hpp"
#include "tessel/runtime/step_observer.hpp"
#include "tessel/runtime/stream.hpp"
#include "tessel/runtime/tensor_impl.hpp"
#include "local_device_ids.hpp"
#include "replicas.hpp"

namespace tessel::detail {
namespace {

// Writes from's values into `to`, of the same layout: each buffer once, on its first holder's
// device, in the devices' order (runtime/stream.hpp's rule for the replicas sharing it after).
void copy_shards(TensorImpl const& from, TensorImpl const& to) {
  for (std::size_t p : local_positions(to)) {
    ShardBuffer const& s = to.shards[p];
    if (!to.owns_buffer(p) || s.bytes.size() == 0) continue;
    copy_bytes(device(s.device), s.bytes.data(), from.shards[p].bytes.data(), s.bytes.size());
  }
  wait_for_buffer_writers(to);
}

// A tensor of the same layout and values in new buffers (replicas sharing a buffer share one).
ImplPtr copy_of(TensorImpl const& from) {
  auto out = TensorImpl::allocate(from.shape, from.dtype, from.sharding, buffer_owners(from));
  out->varying = from.varying;
  copy_shards(from, *out);
  return out;
}

}  // namespace

GraphStatus ProgramGraph::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}

std::optional<std::vector<ImplPtr>> ProgramGraph::run(Program const& program, std::vector<ImplPtr> const& arguments) {
  std::unique_lock lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) return std::nullopt;  // (another thread's call uses the graph's buffers)
  if (!broken_.empty()) {
    status_.why_not = broken_;
    return std::nullopt;
  }
  if (std::string_view why = graphs_unavailable(); !why.empty()) {
    if (status_.why_not != why) status_.why_not = why;  // (no string made per call on a host)
    return std::nullopt;
  }
  if (active_step_observer != nullptr) {  // (it times or records each step: the steps must run one by one)
    status_.why_not = "a trace or profile watches each step";
    return std::nullopt;
  }
  for (auto const& argument : arguments)
    if (is_donated(*argument)) {  // (whether a step writes it in place is decided as the step runs)
      status_.why_not = "a donated argument, which a step may write in place (a graph's buffers are fixed)";
      return std::nullopt;
    }
  status_.why_not.clear();
  if (in_place_.empty() && slots_.empty()) {
    in_place_ = arguments;
    slots_.assign(arguments.size(), nullptr);
  }
  bool changed = false;  // an argument read in place is another tensor now: from now on, a slot
  for (std::size_t i = 0; i < arguments.size(); ++i)
    if (in_place_[i] && in_place_[i] != arguments[i]) {
      in_place_[i].reset();
      changed = true;
    }
  if (!graph_.native || changed) {
    if (!capture(program, arguments)) {
      status_.why_not = broken_;
      return std::nullopt;
    }
  } else {
    bool any_slot = false;
    for (auto const& slot : slots_) any_slot = any_slot || slot != nullptr;
    if (any_slot) wait_for_all(devices_, devices_);  // (the last launch's reads of the slots, on any device)
    for (std::size_t i = 0; i < arguments.size(); ++i)
      if (slots_[i]) copy_shards(*arguments[i], *slots_[i]);
    launch_graph(graph_);
  }
  ++status_.launches;
  return hand_out(program, arguments);
}

bool ProgramGraph::capture(Program const& program, std::vector<ImplPtr> const& arguments) {
  graph_ = CapturedGraph{};  // (the last graph's buffers go back first)
  results_.clear();
  std::vector<ImplPtr> bound(arguments.size());
  for (std::size_t i = 0; i < arguments.size(); ++i) {
    if (in_place_[i]) {
      bound[i] = in_place_[i];
      continue;
    }
    if (slots_[i]) copy_shards(*arguments[i], *slots_[i]);
    else slots_[i] = copy_of(*arguments[i]);
    bound[i] = slots_[i];
  }
  devices_ = local_device_ids();
  begin_capture(devices_);
  std::vector<ImplPtr> made;
  std::string threw;
  try {
    made = program.run_steps(bound);
  } catch (std::exception const& e) {
    threw = e.what();
  } catch (...) {
    threw = "an exception";
  }
  CapturedGraph graph = end_capture();
  if (!graph.native || !threw.empty()) {
    broken_ = !graph.broken.empty() ? graph.broken : "a step threw while it was captured: " + threw;
    return false;
  }
  graph_ = std::move(graph);
  results_ = std::move(made);
  ++status_.captures;
  launch_graph(graph_);  // (capturing ran nothing: this call's work runs now)
  return true;
}

std::vector<ImplPtr> ProgramGraph::hand_out(Program const& program, std::vector<ImplPtr> const& arguments) const {
  std::vector<ImplPtr> out;
  std::vector<ProgramValue> const& sources = program.result_sources();
  out.reserve(sources.size());
  for (std::size_t r = 0; r < sources.size(); ++r) {
    switch (sources[r].from) {
      case ProgramValue::From::argument: out.push_back(arguments[static_cast<std::size_t>(sources[r].index)]); break;
      case ProgramValue::From::constant: out.push_back(results_[r]); break;
      case ProgramValue::From::step: out.push_back(copy_of(*results_[r])); break;
    }
  }
  return out;
}

}  // namespace tessel::detail
