#include "worker.hpp"

#include <algorithm>
#include <cstdio>
#include <format>
#include <vector>

#include "fma_peak.hpp"
#include "machine.hpp"
#include "result_row.hpp"
#include "results_csv.hpp"
#include "results_json.hpp"
#include "statistics.hpp"
#include "tessel/tessel.hpp"
#include "text_files.hpp"
#include "timing.hpp"
#include "workloads.hpp"

namespace tessel::study {

std::string WorkerTask::arguments() const {
  return std::format("--worker {} {} {} {} {} {} {} '{}'", threads, all_threads, wait_policy.empty() ? "-" : wait_policy,
                     preset.empty() ? "-" : preset, done, total, elapsed_s, out_csv);
}

WorkerTask WorkerTask::parse(std::span<std::string const> words) {
  auto or_empty = [](std::string const& word) { return word == "-" ? std::string() : word; };
  return {std::stoi(words[0]), std::stoi(words[1]), or_empty(words[2]), or_empty(words[3]),
          std::stoi(words[4]), std::stoi(words[5]), std::stod(words[6]), words[7]};
}

namespace {

constexpr int profiled_calls = 3;  // per run; the JSON's per-instruction times are their median

struct Progress {
  int done = 0, total = 0;
  double elapsed0 = 0;  // seconds spent before this process started
  Clock::time_point t0 = Clock::now();
  void line(std::string const& what) {
    ++done;
    std::fprintf(stderr, "[study %d/%d] %s (%d left, %.0f s elapsed)\n", done, total, what.c_str(), total - done,
                 elapsed0 + seconds_since(t0));
  }
};

// Times one run on one configuration (`as_run`: with this process's thread count): the study's
// repetitions, each as many calls of the workload as take min_time, then calls of its limit's
// kernel, so that both see the machine in the same state.
Row time_run(Study const& study, WorkloadRun const& run, Configuration const& as_run, std::string const& platform,
             MachineLimits& limits, double fma_peak) {
  Workload const& workload = *find_workload(run.workload);
  Instance instance;
  try {
    instance = workload.make(run.size, as_run);
  } catch (tessel::Error const& e) {
    throw StudyError(std::format("workload '{}' of size {} on {}: {}", run.workload, run.size.label(), as_run.label(),
                                 e.what()));
  }
  Bound const bound = workload.bound;
  auto limit_call = [&] { limits.run(bound); };
  double limit_work = limits.work(bound);
  double work = bound == Bound::compute ? instance.flops / 1e9 : instance.bytes / 1e9;
  int calls = calls_for(instance.call, study.min_time);
  int limit_calls = calls_for(limit_call, std::min(study.min_time, 0.05));
  std::vector<double> seconds, foms, limit_foms;
  for (int r = 0; r < study.repetitions; ++r) {
    double s = time_calls(instance.call, calls);
    double l = time_calls(limit_call, limit_calls);
    seconds.push_back(s);
    foms.push_back(work / s);
    limit_foms.push_back(limit_work / l);
  }
  Row row;
  row.problem = run.problem();
  row.platform = platform;
  row.application = as_run.label();
  row.unit = fom_unit(bound);
  row.fom = median(foms);
  row.fom_min = *std::min_element(foms.begin(), foms.end());
  row.fom_max = *std::max_element(foms.begin(), foms.end());
  row.fom_stddev = sample_stddev(foms);
  row.median_s = median(seconds);
  row.repetitions = study.repetitions;
  row.limit_name = limit_name(bound);
  row.limit = median(limit_foms);
  if (bound == Bound::memory) row.peak_GBps = row.limit;
  if (bound == Bound::compute) row.peak_GFLOPps = row.limit;
  row.peak_fma_GFLOPps = fma_peak;
  row.flops = instance.flops;
  row.bytes = instance.bytes;
  row.workload = run.workload;
  row.size = run.size.label();
  row.devices = as_run.devices;
  row.threads = as_run.threads;
  row.mesh = as_run.mesh_label();
  // Where the time goes: a few profiled calls after the timed ones (profile fences between
  // instructions, so these calls are not part of the figure of merit).
  if (instance.profile) {
    std::vector<std::vector<InstructionTime>> profiles;
    for (int p = 0; p < profiled_calls; ++p) profiles.push_back(instance.profile());
    row.instructions = median_instructions(profiles);
  }
  return row;  // and frees the inputs before the next run allocates
}

// Runs the study's (workload, size) list on every configuration with this process's thread count
// (threads = 0 in the file: `all_threads`, the parent's count), wait policy and preset.
std::vector<Row> run_configurations(Study const& study, std::string const& platform, int all_threads,
                                    std::string const& wait_policy, std::string const& preset, Progress& progress) {
  MachineLimits limits;
  std::vector<Row> rows;
  int threads = Kokkos::DefaultHostExecutionSpace().concurrency();
  // The widest vector FMAs on every thread: the roofline's compute ceiling above the BLAS's.
  auto fma = measure::widest_fma();
  double fma_peak = fma.chains ? fma.calibrate(0.02) : 0;
  for (auto const& config : study.configurations) {
    if ((config.threads ? config.threads : all_threads) != threads || config.wait_policy != wait_policy ||
        config.preset != preset)
      continue;
    tessel::set_device_count(config.devices);
    Configuration as_run = config;
    as_run.threads = threads;
    for (auto const& run : study.runs) {
      progress.line(std::format("{} on {}", run.problem(), as_run.label()));
      rows.push_back(time_run(study, run, as_run, platform, limits, fma_peak));
    }
  }
  return rows;
}

}  // namespace

void run_worker(char* program, Study const& study, std::string platform, WorkerTask const& task) {
  std::string threads = "--kokkos-num-threads=" + std::to_string(task.threads);
  // argv[argc] is null, as in main's: Kokkos moves the arguments it takes out, the null too.
  std::vector<char*> kokkos_argv = {program, threads.data(), nullptr};
  int kokkos_argc = static_cast<int>(kokkos_argv.size()) - 1;
  tessel::ScopeGuard guard(kokkos_argc, kokkos_argv.data());
  // A preset's build is a platform of its own: this machine, its backend and the preset's name.
  if (!task.preset.empty()) platform = std::format("{} [{}]", platform_label(), task.preset);
  if (platform.empty()) platform = platform_label();
  Progress progress{task.done, task.total, task.elapsed_s};
  auto rows = run_configurations(study, platform, task.all_threads, task.wait_policy, task.preset, progress);
  write_file(task.out_csv, to_csv(rows));
  write_file(task.out_csv + ".instructions.json", instructions_to_json(rows));
}

}  // namespace tessel::study
