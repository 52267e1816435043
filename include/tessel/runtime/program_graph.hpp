#pragma once
// A recorded program (runtime/program.hpp) replayed as one captured graph (runtime/capture.hpp),
// where the backend captures graphs: one launch for a whole call instead of one per kernel, copy
// and GEMM. A graph holds the addresses it was captured with, so:
// - an argument is read in place while every call passes the same tensor (weights passed as
//   arguments); once a call passes another, that argument is copied on each call into a buffer of
//   the graph's own (as CUDA graph users keep static inputs), and the graph is captured again;
// - what a call returns is copied out of the graph's buffers, so that it stays valid after the
//   next call (a result that is an argument or a constant of the program is returned itself);
// - the buffers its steps use belong to the graph until it goes.
// A capture that breaks (a step waits on the host) or throws leaves the program replayed step by
// step from then on, and says why. One call uses the graph at a time: a concurrent call of the
// same program runs step by step.
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tessel/runtime/capture.hpp"

namespace tessel::detail {

struct TensorImpl;
using ImplPtr = std::shared_ptr<TensorImpl const>;
class Program;

struct GraphStatus {
  int captures = 0;     // graphs captured: the first, and one more each time an argument read in place changed
  long launches = 0;    // calls that ran as one graph launch
  std::string why_not;  // why the last call ran step by step ("" when it was a launch)
};

class ProgramGraph {
 public:
  // The results of a call with these arguments, run as the graph's launch (captured first where
  // needed); none when the call must run step by step (status().why_not says why).
  std::optional<std::vector<ImplPtr>> run(Program const& program, std::vector<ImplPtr> const& arguments);
  [[nodiscard]] GraphStatus status() const;

 private:
  bool capture(Program const& program, std::vector<ImplPtr> const& arguments);
  std::vector<ImplPtr> hand_out(Program const& program, std::vector<ImplPtr> const& arguments) const;

  mutable std::mutex mutex_;
  CapturedGraph graph_;
  std::vector<ImplPtr> in_place_;  // by argument: the tensor the graph reads, or null where it reads its slot
  std::vector<ImplPtr> slots_;     // by argument: the graph's own copy of it, or null
  std::vector<ImplPtr> results_;   // the graph's results (from the capture's run of the steps)
  std::vector<int> devices_;
  std::string broken_;             // why graphs were given up for good
  GraphStatus status_;
};

}  // namespace tessel::detail
