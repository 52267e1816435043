// The trace writer (tools/trace.hpp): a step observer that times each step between fences and
// writes one Chrome trace event per device holding the step's result, flushed after every step.
#include "tessel/tools/trace.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <format>
#include <mutex>

#include <Kokkos_Core.hpp>
#include <nlohmann/json.hpp>

#include "tessel/core/error.hpp"
#include "tessel/plan/collective.hpp"
#include "tessel/runtime/distributed.hpp"
#include "tessel/runtime/execute.hpp"
#include "tessel/runtime/step_devices.hpp"
#include "tessel/runtime/step_observer.hpp"
#include "tessel/plan/cost_analysis.hpp"
#include "tessel/plan/viewed_operand.hpp"
#include "tessel/runtime/device.hpp"

namespace tessel {
namespace detail {
namespace {

using Clock = std::chrono::steady_clock;

ShardBuffer const* shard_on(TensorImpl const& t, int device) {
  for (auto const& s : t.shards)
    if (s.device == device && s.addressable) return &s;
  return nullptr;
}

class TraceWriter final : public StepObserver {
 public:
  void start(std::string const& requested) {
    std::lock_guard lock(mutex_);
    if (file_)
      throw Error(std::format("tessel::start_trace('{}'): a trace is already being written to '{}'; stop_trace() first",
                              requested, path_));
    if (requested.empty()) throw Error("tessel::start_trace: the trace file's path is empty");
    std::string path = requested;
    if (distributed::process_count() > 1) {  // one file per process: trace.json -> trace.<p>.json
      auto dot = path.rfind('.');
      auto slash = path.rfind('/');
      if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) dot = path.size();
      path.insert(dot, std::format(".{}", distributed::process_index()));
    }
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f)
      throw Error(std::format("tessel: cannot write the trace file '{}': {}", path, std::strerror(errno)));
    file_ = f;
    path_ = path;
    process_ = distributed::process_index();
    origin_ = Clock::now();
    first_ = true;
    calls_ = 0;
    named_.clear();
    std::fputs("[\n", file_);
    write(nlohmann::json{{"name", "process_name"}, {"ph", "M"}, {"pid", process_},
                         {"args", {{"name", std::format("tessel process {}", process_)}}}});
    std::fflush(file_);
    hook_ends();
  }

  void stop() noexcept {
    std::lock_guard lock(mutex_);
    if (!file_) return;
    std::fputs("\n]\n", file_);
    std::fclose(file_);
    file_ = nullptr;
    path_.clear();
  }

  std::optional<std::string> path() {
    std::lock_guard lock(mutex_);
    if (!file_) return std::nullopt;
    return path_;
  }
  [[nodiscard]] bool on() const { return file_ != nullptr; }

  void before(plan::Plan const& plan, std::size_t step, RunState const& state) override {
    if (step == 0) ++calls_;
    inputs_.clear();
    for (int o : plan.steps[step].operands) inputs_.push_back(state.values[static_cast<std::size_t>(o)]);
    fence_step_devices(plan, step, state);  // (a step's time is from fence to fence, where it runs)
    start_ = Clock::now();
  }

  void after(plan::Plan const& plan, std::size_t k, RunState const& state) override {
    fence_step_devices(plan, k, state);
    auto end = Clock::now();
    std::lock_guard lock(mutex_);
    if (!file_) return;
    plan::Step const& step = plan.steps[k];
    auto const& made = state.values[static_cast<std::size_t>(plan::result_slot(step))];
    if (!made) return;
    double ts = std::chrono::duration<double, std::micro>(start_ - origin_).count();
    double dur = std::chrono::duration<double, std::micro>(end - start_).count();
    auto groups = plan::step_groups(step);
    auto axes = plan::step_axes(step);
    for (auto const& out : made->shards) {
      if (!out.addressable) continue;
      int const d = out.device;
      // What this device read and wrote, and the blocks its op's work is counted from.
      double read = 0, written = 0;
      plan::StepBlocks blocks;
      blocks.made = out.index.extent();
      ShardBuffer const* first = nullptr;
      for (std::size_t i = 0; i < inputs_.size(); ++i) {
        auto const& in = inputs_[i];
        ShardBuffer const* s = in ? shard_on(*in, d) : nullptr;
        if (!s) continue;
        if (!first) first = s;
        int const view = plan::viewed_operand(step, i);
        if (view < 0) {
          read += static_cast<double>(s->bytes.size());
          blocks.reads.push_back(s->index.extent());
          continue;
        }
        // A GEMM reading a view in place read the view's block of the shard.
        auto const& v = plan.graph[static_cast<std::size_t>(view)];
        int const position = static_cast<int>(s - in->shards.data());
        Shape const block = plan::view_sharding(plan, view).shard_shape(v.shape, position);
        read += static_cast<double>(block.num_elements()) * static_cast<double>(size_of(in->dtype));
        blocks.reads.push_back(block);
      }
      if (step.kind == plan::StepKind::view) read = 0;  // the same blocks, seen as another shape
      else written = static_cast<double>(out.bytes.size());
      plan::StepWork const work = plan::step_work(plan, step, blocks);
      // An update that did run in place (its result in its operand's buffer) read and wrote the box only.
      if (work.updates_in_place && first && first->bytes.data() == out.bytes.data() && !out.bytes.empty()) {
        double const element = static_cast<double>(out.bytes.size()) / static_cast<double>(out.index.extent().num_elements());
        read -= static_cast<double>(first->bytes.size());
        written = static_cast<double>(*work.updates_in_place) * element;
      }
      // A gather or a slice read of its first operand only what it handed on.
      if (work.reads_of_first && first && !first->bytes.empty()) {
        double const element = static_cast<double>(first->bytes.size()) / static_cast<double>(first->index.extent().num_elements());
        read -= static_cast<double>(first->bytes.size()) - std::min(static_cast<double>(first->bytes.size()),
                                                                   static_cast<double>(*work.reads_of_first) * element);
      }
      nlohmann::json args{{"step", k},          {"call", calls_},         {"kind", step.name},
                          {"bytes_read", read}, {"bytes_written", written}, {"estimate_us", step.estimate_us}};
      if (step.kind == plan::StepKind::kernel) args["ops"] = step.ops;
      if (work.gemm) args["batch"] = work.gemm->batch, args["m"] = work.gemm->m, args["n"] = work.gemm->n, args["k"] = work.gemm->k;
      args["flops"] = work.flops;
      if (step.kind == plan::StepKind::collective) args["collective"] = plan::name(step.collective);
      if (!groups.empty()) {
        args["mesh_axes"] = axes;
        args["replica_groups"] = groups;
        for (auto const& g : groups)
          if (std::find(g.begin(), g.end(), d) != g.end()) args["group"] = g;
      }
      if (step.kind != plan::StepKind::kernel) args["bytes"] = step.bytes;
      args["text"] = plan::step_text(plan, step);
      name_device(d);
      write(nlohmann::json{{"name", step.label}, {"cat", step.name}, {"ph", "X"},   {"ts", ts},
                           {"dur", dur},         {"pid", process_},  {"tid", d},    {"args", std::move(args)}});
    }
    std::fflush(file_);
    inputs_.clear();
  }

 private:
  void write(nlohmann::json const& event) {
    if (!first_) std::fputs(",\n", file_);
    first_ = false;
    std::fputs(event.dump().c_str(), file_);
  }
  // The first event on a device names its track ("device 3") and orders the tracks by id.
  void name_device(int d) {
    auto i = static_cast<std::size_t>(d);
    if (named_.size() <= i) named_.resize(i + 1, false);
    if (named_[i]) return;
    named_[i] = true;
    write(nlohmann::json{{"name", "thread_name"}, {"ph", "M"}, {"pid", process_}, {"tid", d},
                         {"args", {{"name", std::format("device {}", d)}}}});
    write(nlohmann::json{{"name", "thread_sort_index"}, {"ph", "M"}, {"pid", process_}, {"tid", d},
                         {"args", {{"sort_index", d}}}});
  }
  // The file is completed however the program ends: Kokkos finalizing (the ScopeGuard), exit, or
  // an uncaught exception (before the handler that was there, which usually aborts).
  void hook_ends() {
    if (!at_exit_) {
      at_exit_ = true;
      std::atexit([] { stop_trace(); });
      previous_terminate_ = std::set_terminate([] {
        stop_trace();
        if (previous_terminate_) previous_terminate_();
        std::abort();
      });
    }
    if (!at_finalize_ && Kokkos::is_initialized() && !Kokkos::is_finalized()) {
      at_finalize_ = true;
      Kokkos::push_finalize_hook([this] {
        at_finalize_ = false;
        stop_trace();
      });
    }
  }

  std::mutex mutex_;
  std::FILE* file_ = nullptr;
  std::string path_;
  int process_ = 0;
  Clock::time_point origin_, start_;
  bool first_ = true;
  long calls_ = 0;
  std::vector<bool> named_;
  std::vector<ImplPtr> inputs_;
  bool at_exit_ = false, at_finalize_ = false;
  static inline std::terminate_handler previous_terminate_ = nullptr;
};

TraceWriter& writer() {
  static auto* w = new TraceWriter;  // never destroyed: exit and terminate handlers use it
  return *w;
}

// The observer the executor starts with: at the first step it reads TESSEL_TRACE once, hands over
// to the trace writer or to nothing, and passes the step on.
class FromEnvironment final : public StepObserver {
 public:
  constexpr FromEnvironment() = default;
  void before(plan::Plan const& plan, std::size_t step, RunState const& state) override {
    trace_from_environment();
    if (active_step_observer) active_step_observer->before(plan, step, state);
  }
  void after(plan::Plan const& plan, std::size_t step, RunState const& state) override {
    if (active_step_observer && active_step_observer != this) active_step_observer->after(plan, step, state);
  }
};

constinit FromEnvironment from_environment;

}  // namespace

constinit StepObserver* active_step_observer = &from_environment;

void trace_from_environment() {
  if (active_step_observer != &from_environment) return;
  active_step_observer = nullptr;
  char const* path = std::getenv("TESSEL_TRACE");
  if (!path || !*path) return;
  try {
    start_trace(path);
  } catch (Error const& e) {
    throw Error(std::format("TESSEL_TRACE={}: {}", path, e.what()));
  }
}

}  // namespace detail

void start_trace(std::string const& path) {
  using detail::active_step_observer;
  detail::trace_from_environment();  // so that the environment's trace cannot start over this one
  if (active_step_observer && active_step_observer != &detail::writer())
    throw Error(std::format("tessel::start_trace('{}'): steps are being watched already (a profile is running)", path));
  detail::writer().start(path);
  active_step_observer = &detail::writer();
}

void stop_trace() {
  auto& w = detail::writer();
  w.stop();
  if (detail::active_step_observer == &w) detail::active_step_observer = nullptr;
}

std::optional<std::string> trace_path() { return detail::writer().path(); }

}  // namespace tessel
