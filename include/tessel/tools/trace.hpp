#pragma once
// A timeline of what runs, for Perfetto (ui.perfetto.dev) and chrome://tracing. While a trace is
// on, every instruction the executor runs (plan::Step: a fused kernel, a GEMM, a collective, a
// reshard, a view) becomes one Chrome trace event ("ph": "X") per device that runs it, named by
// its label (the user op it comes from, as Kokkos Tools and explain name it), with its start and
// duration in microseconds since the trace began: pid is the process (distributed::process_index),
// tid the device id, so each device is a track. Each step is timed as a whole, between fences
// (host backends run every device's share of a step on one thread pool, so a step has the same
// span on each device's track). The event's args carry what the plan says and the run measured:
// kind, ops (kernels), batch/m/n/k and flops (GEMMs), collective, mesh_axes, replica_groups, this
// device's group and bytes (collectives), the bytes this device read and wrote, the cost model's
// estimate_us, the step index, the call number and the explain line. Flops and bytes are counted
// from the blocks the run made, by plan/cost_analysis.hpp's rules.
//
// TESSEL_TRACE=trace.json starts a trace at the first step of the process; start_trace does so in
// code. The file is JSON (the trace-event "array" form), complete once the trace stops: at
// stop_trace, when Kokkos finalizes (the last ScopeGuard ends), at exit, or on an uncaught
// exception. Events are flushed after each step, so a program killed outright still leaves every
// finished step's events, in a file lacking only the closing ']' (which both viewers accept).
// In a run of several processes each writes its own file: trace.json becomes trace.<process>.json.
#include <optional>
#include <string>

namespace tessel {

// Starts writing a trace to `path`. Throws tessel::Error naming the path and the system's reason
// when the file cannot be created, and when a trace is already being written (naming its file).
void start_trace(std::string const& path);
// Completes the file and stops tracing; nothing when no trace is on.
void stop_trace();
// The file being written, if a trace is on.
std::optional<std::string> trace_path();

// A trace for the lifetime of a scope.
class TraceScope {
 public:
  explicit TraceScope(std::string const& path) { start_trace(path); }
  ~TraceScope() { stop_trace(); }
  TraceScope(TraceScope const&) = delete;
  TraceScope& operator=(TraceScope const&) = delete;
};

namespace detail {
// Reads TESSEL_TRACE now if no step has run yet (the executor otherwise reads it at its first
// step); what the profiler calls before it watches steps itself.
void trace_from_environment();
}  // namespace detail

}  // namespace tessel
