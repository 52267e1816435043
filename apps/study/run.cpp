#include "run.hpp"

#include <algorithm>
#include <cstdlib>
#include <format>
#include <iostream>
#include <map>
#include <thread>
#include <tuple>
#include <utility>

#include "portability.hpp"
#include "result_files.hpp"
#include "results_csv.hpp"
#include "results_json.hpp"
#include "text_files.hpp"
#include "timing.hpp"
#include "worker.hpp"
#include "workloads.hpp"

namespace fs = std::filesystem;

namespace tessel::study {

namespace {

// The platform limits are the best each was measured at on that platform in this study (over
// thread counts and runs), so that arch eff compares every configuration with the same ceiling.
// (Presets of other backends are other platforms, with limits of their own.)
void use_best_platform_limits(std::vector<Row>& rows) {
  std::map<std::pair<std::string, std::string>, double> best;  // (platform, limit name) -> limit
  for (auto const& r : rows) {
    auto& b = best[{r.platform, r.limit_name}];
    b = std::max(b, r.limit);
  }
  auto peaks = platform_peaks(rows);
  for (auto& r : rows) {
    r.limit = best[{r.platform, r.limit_name}];
    auto const& p = peaks[r.platform];
    r.peak_GBps = p.GBps;
    r.peak_GFLOPps = p.GFLOPps;
    r.peak_fma_GFLOPps = p.fma_GFLOPps;
  }
}

// The rows of a preset that cannot run here (not built, or its run failed): a figure of merit of 0
// on a platform named for the preset, so that PP over the study's platforms is 0, as for any
// application without a result on a platform.
std::vector<Row> unsupported_rows(Study const& study, std::string const& preset, int threads,
                                  std::string const& policy) {
  std::vector<Row> rows;
  for (auto const& config : study.configurations) {
    if (config.preset != preset || (config.threads ? config.threads : threads) != threads || config.wait_policy != policy)
      continue;
    Configuration as_run = config;
    as_run.threads = threads;
    for (auto const& run : study.runs) {
      Row row;
      row.problem = run.problem();
      row.platform = std::format("[{}] unsupported", preset);
      row.application = as_run.label();
      row.unit = fom_unit(find_workload(run.workload)->bound);
      row.workload = run.workload;
      row.size = run.size.label();
      row.devices = config.devices;
      row.threads = threads;
      row.mesh = config.mesh_label();
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

// What threads = 0 in a study file stands for: OMP_NUM_THREADS, else every hardware thread.
int all_threads() {
  char const* env = std::getenv("OMP_NUM_THREADS");
  return env && std::atoi(env) > 0 ? std::atoi(env) : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

std::vector<Row> run_study(Study const& study, std::string const& study_file, fs::path const& dir,
                           std::string const& platform) {
  fs::create_directories(dir);
  // One worker per (preset, thread count, wait policy); threads = 0 means all of this machine's.
  int all = all_threads();
  std::map<std::tuple<std::string, int, std::string>, int> workers;  // (preset, threads, policy) -> configurations
  for (auto const& c : study.configurations) ++workers[{c.preset, c.threads ? c.threads : all, c.wait_policy}];
  int total = 0;
  for (auto const& [key, n] : workers) total += n * static_cast<int>(study.runs.size());
  std::cerr << std::format("study '{}': {} runs ({} problems x {} configurations), {} repetitions each, into {}\n",
                           study.name, total, study.runs.size(), study.configurations.size(), study.repetitions,
                           dir.string());
  auto t0 = Clock::now();
  std::vector<Row> rows;
  int done = 0;
  std::string self = fs::read_symlink("/proc/self/exe").string();
  for (auto const& [key, n] : workers) {
    auto const& [preset, threads, policy] = key;
    int runs = n * static_cast<int>(study.runs.size());
    // A preset's configurations run in that preset's build of this tool, beside this one
    // (build/<preset>/tessel_study); without one, or when it fails, they are unsupported here.
    fs::path binary = preset.empty() ? fs::path(self) : fs::path(self).parent_path().parent_path() / preset / "tessel_study";
    auto unsupported = [&](std::string const& why) {
      std::cerr << std::format("tessel_study: preset '{}' {}: its {} runs count as unsupported (fom 0, PP 0)\n", preset,
                               why, runs);
      auto none = unsupported_rows(study, preset, threads, policy);
      rows.insert(rows.end(), none.begin(), none.end());
      done += runs;
    };
    if (!preset.empty() && !fs::exists(binary)) {
      unsupported(std::format("is not built here (no {})", binary.string()));
      continue;
    }
    fs::path part = dir / std::format("part_{}t{}{}.csv", preset.empty() ? "" : preset + "_", threads, policy);
    WorkerTask task{threads, all, policy, preset, done, total, seconds_since(t0), part.string()};
    std::string cmd = std::format("OMP_NUM_THREADS={} {}'{}' '{}' {}", threads,
                                  policy.empty() ? "" : "OMP_WAIT_POLICY=" + policy + " ", binary.string(), study_file,
                                  task.arguments());
    if (!platform.empty()) cmd += std::format(" --platform '{}'", platform);
    int rc = std::system(cmd.c_str());
    if (rc != 0 && !preset.empty()) {
      unsupported(std::format("failed here (exit {})", rc));
      continue;
    }
    if (rc != 0)
      throw StudyError(std::format("the runs with {} threads{} failed (exit {})", threads,
                                   policy.empty() ? "" : ", " + policy + " waits", rc));
    auto part_rows = read_csv(part.string());
    std::string instructions = part.string() + ".instructions.json";
    attach_instructions(part_rows, read_file(instructions, "instruction lists"), instructions);
    rows.insert(rows.end(), part_rows.begin(), part_rows.end());
    fs::remove(part);
    fs::remove(instructions);
    done += runs;
  }
  use_best_platform_limits(rows);
  write_results(dir, "results", study.name, rows);
  write_file(dir / "problems.json", problems_json(study, rows.empty() ? platform : rows[0].platform, rows));
  std::cerr << std::format("study '{}': {} runs in {:.0f} s; results in {}/results.csv, results.json, pp.csv\n",
                           study.name, rows.size(), seconds_since(t0), dir.string());
  return rows;
}

}  // namespace tessel::study
