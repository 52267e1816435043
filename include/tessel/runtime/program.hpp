#pragma once
// A jitted function's body as a list of evaluations, recorded on its first call and replayed on
// the next calls with the same argument signature (runtime/jit.hpp). This is what jax.jit does
// with a Python function: trace it once, then run the traced program. A body that evaluates tensors
// itself (a whole forward, layer by layer) then costs one plan run per evaluation and nothing more:
// no expression built, no plan looked up.
//
// A replay repeats what the first call ran, so a body is recorded only when what it runs depends
// on its arguments' signature alone. Recording gives up (and the body runs on every call, as a
// plain function would) when the body makes a tensor outside an evaluation (device_put of host
// data, random draws, make_array_from_callback), reads a value to the host, or calls shard_map
// or a pipeline. Tensors the body reads that are not arguments (weights captured by reference)
// are constants of the program, as jax.jit bakes closed-over arrays: pass as arguments what
// changes from call to call.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tessel/core/named_sharding.hpp"
#include "tessel/plan/memory_analysis.hpp"
#include "tessel/runtime/execute.hpp"
#include "tessel/runtime/program_graph.hpp"
#include "tessel/runtime/replay_hooks.hpp"

namespace tessel::detail {

// Where a step's input comes from on a replay.
struct ProgramValue {
  enum class From : std::uint8_t { argument, step, constant };
  From from = From::constant;
  int index = 0;
};

// One evaluation (a plan run with its tensors and scalars bound), or one reshard (device_put of a
// tensor to another sharding).
struct ProgramStep {
  plan::Plan const* plan = nullptr;  // nullptr for a reshard
  StepKernels const* kernels = nullptr;
  std::size_t nodes = 0;                                  // RunState's size
  std::vector<std::pair<std::size_t, ProgramValue>> tensors;  // graph node -> its tensor (a reshard: its source)
  std::vector<double> scalars;                            // by graph node
  std::optional<NamedSharding> reshard_to;
  std::vector<int> release;  // steps whose results no later step reads: dropped after this one
};

class Program {
 public:
  // Runs the steps with these arguments (in the order the body received them); returns the
  // body's results (one, or each tensor of the tuple or vector it returned). As one graph where the
  // backend captures graphs (runtime/program_graph.hpp), else step by step.
  [[nodiscard]] std::vector<ImplPtr> run(std::vector<ImplPtr> const& arguments) const;
  // The same, step by step: each evaluation and reshard queued as the body queued it.
  [[nodiscard]] std::vector<ImplPtr> run_steps(std::vector<ImplPtr> const& arguments) const;
  // Where each result comes from.
  [[nodiscard]] std::vector<ProgramValue> const& result_sources() const { return results_; }
  // Whether calls run as a graph: how many captures and launches, or why not.
  [[nodiscard]] GraphStatus graph_status() const { return graph_->status(); }
  // The plans one call runs: each distinct plan once, with the steps that run it.
  [[nodiscard]] std::string explain() const;
  // What each device holds while a call with these arguments runs (plan/memory_analysis.hpp): the
  // arguments and the program's constants (weights it reads), each step's result until the last
  // step that reads it, and each plan's own temporaries.
  [[nodiscard]] plan::MemoryAnalysis memory_analysis(std::vector<ImplPtr> const& arguments) const;
  [[nodiscard]] std::size_t steps() const { return steps_.size(); }

 private:
  friend class ProgramRecorder;
  std::vector<ProgramStep> steps_;
  std::vector<ImplPtr> constants_;
  std::vector<ProgramValue> results_;
  // (shared by the copies of this program, which run the same steps)
  std::shared_ptr<ProgramGraph> graph_ = std::make_shared<ProgramGraph>();
};

// Records, while it lives, what the body it watches runs on this thread.
class ProgramRecorder {
 public:
  explicit ProgramRecorder(std::vector<ImplPtr> const& arguments);
  ~ProgramRecorder();
  ProgramRecorder(ProgramRecorder const&) = delete;
  ProgramRecorder& operator=(ProgramRecorder const&) = delete;

  // The program that returns `results`, or nullopt when the body did something a replay cannot
  // repeat (why_not() says what).
  std::optional<Program> finish(std::vector<ImplPtr> const& results);
  [[nodiscard]] std::string const& why_not() const { return why_not_; }

  // The hooks: an evaluation about to run with its inputs bound, and its result.
  void begin_eval(plan::Plan const& plan, StepKernels const& kernels, RunState const& bound);
  void begin_reshard(ImplPtr const& source, NamedSharding const& to);
  void end_step(ImplPtr const& made);
  // Something the body did that a replay would not repeat.
  void give_up(std::string_view what);
  // Inside a recorded step: what the step does itself is not the body's.
  [[nodiscard]] bool in_step() const { return in_step_; }

 private:
  ProgramValue value_of(ImplPtr const& t);
  Program program_;
  // Tensors made anywhere since the recording began, and those made inside its steps: a difference
  // is a tensor another thread made for the body, which a replay would not make again.
  std::uint64_t made_at_start_ = 0, made_at_step_ = 0, made_in_steps_ = 0;
  std::unordered_map<TensorImpl const*, ProgramValue> known_;  // what each tensor seen so far is
  std::vector<ImplPtr> made_;  // kept while recording, so that no address is reused
  bool in_step_ = false;
  std::string why_not_;
  ProgramRecorder* previous_;
};

// The recorder watching this thread, or null.
extern thread_local ProgramRecorder* program_recorder;


// An evaluation's hooks, around detail::execute: records the step when a recorder watches.
class RecordedStep {
 public:
  RecordedStep(plan::Plan const& plan, StepKernels const& kernels, RunState const& bound)
      : recorder_(program_recorder != nullptr && !program_recorder->in_step() ? program_recorder : nullptr) {
    if (recorder_) [[unlikely]]
      recorder_->begin_eval(plan, kernels, bound);
  }
  RecordedStep(ImplPtr const& source, NamedSharding const& to)
      : recorder_(program_recorder != nullptr && !program_recorder->in_step() ? program_recorder : nullptr) {
    if (recorder_) [[unlikely]]
      recorder_->begin_reshard(source, to);
  }
  ~RecordedStep() {
    if (recorder_ && !done_) [[unlikely]]
      recorder_->give_up("an evaluation that threw");
  }
  RecordedStep(RecordedStep const&) = delete;
  RecordedStep& operator=(RecordedStep const&) = delete;
  void made(ImplPtr const& value) {
    if (recorder_) [[unlikely]]
      recorder_->end_step(value);
    done_ = true;
  }

 private:
  ProgramRecorder* recorder_;
  bool done_ = false;
};

}  // namespace tessel::detail
