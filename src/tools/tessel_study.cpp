// tessel_study: runs a performance-portability study (./tessel study), or merges the results of
// several (./tessel study --merge).
//
//   tessel_study FILE.toml [--out DIR] [--platform NAME]
//       checks the whole study file, then runs every (workload, size) on every configuration, each
//       over the study's repetitions with the machine's limits timed interleaved in the same loop,
//       and writes DIR/results.csv (P3 layout), DIR/results.json, DIR/pp.csv and
//       DIR/problems.json (what a second application, scripts/study_jax.py, needs to run the same
//       problems). DIR defaults to build/study/<study name>.
//   tessel_study --merge A.csv B.csv ... [--out DIR]
//       combines result files (of several machines, or a JAX run), recomputes the efficiencies and
//       Pennycook's PP metric, and writes DIR/merged.csv, DIR/merged.json, DIR/pp.csv.
//
// Configurations of different thread counts run in child processes of this binary (a Kokkos
// process has one thread pool), one per thread count, each with OMP_NUM_THREADS and
// --kokkos-num-threads set; the parent gathers their rows.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <format>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "fma_peak.hpp"
#include "study.hpp"
#include "study_workloads.hpp"
#include "tessel/tessel.hpp"
#include "triad.hpp"

namespace fs = std::filesystem;
using namespace tessel::study;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Times `calls` calls of f (fenced), in seconds per call.
template <class F>
double time_calls(F const& f, int calls) {
  auto t0 = Clock::now();
  for (int i = 0; i < calls; ++i) f();
  Kokkos::fence();
  return seconds_since(t0) / calls;
}

// How many calls of f take about `seconds` (at least 1), from one call after a warm-up call.
template <class F>
int calls_for(F const& f, double seconds) {
  time_calls(f, 1);
  double t = time_calls(f, 1);
  return static_cast<int>(std::clamp(std::ceil(seconds / std::max(t, 1e-7)), 1.0, 1e6));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The machine's limits, each a kernel timed interleaved with the workloads.
struct Limits {
  tessel::bench::Triad triad{std::int64_t{1} << 24};  // 3 x 64 MiB: past any last-level cache
  Kokkos::View<float*, tessel::MemSpace> src{Kokkos::view_alloc(Kokkos::WithoutInitializing, "copy_src"), 1 << 24};
  Kokkos::View<float*, tessel::MemSpace> dst{Kokkos::view_alloc(Kokkos::WithoutInitializing, "copy_dst"), 1 << 24};
  static constexpr int gemm_n = 1024;
  std::vector<float> a, b, c;
  Limits() : a(gemm_n * gemm_n, 1.0f), b(gemm_n * gemm_n, 0.5f), c(gemm_n * gemm_n, 0.0f) {
    Kokkos::deep_copy(src, 1.0f);
    Kokkos::deep_copy(dst, 0.0f);
  }
  void copy() const { Kokkos::deep_copy(dst, src); }
  double copy_bytes() const { return static_cast<double>(src.extent(0)) * sizeof(float); }
  void gemm() {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, gemm_n, gemm_n, gemm_n, 1.0f, a.data(), gemm_n, b.data(),
                gemm_n, 0.0f, c.data(), gemm_n);
  }
  static double gemm_flops() { return 2.0 * gemm_n * gemm_n * gemm_n; }
};

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

// Runs the study's (workload, size) list on every configuration with this process's thread count
// (threads = 0 in the file: `all`, the parent's count), wait policy and preset.
std::vector<Row> run_configurations(Study const& study, std::string const& platform, int all,
                                    std::string const& wait_policy, std::string const& preset, Progress& progress) {
  Limits limits;
  std::vector<Row> rows;
  int have = Kokkos::DefaultHostExecutionSpace().concurrency();
  // The widest vector FMAs on every thread: the roofline's compute ceiling above the BLAS's.
  auto fma = tessel::bench::avx512_fma();
  if (!fma.chains) fma = tessel::bench::avx2_fma();
  double fma_peak = fma.chains ? fma.calibrate(0.02) : 0;
  for (auto const& config : study.configurations) {
    if ((config.threads ? config.threads : all) != have || config.wait_policy != wait_policy || config.preset != preset)
      continue;
    tessel::set_device_count(config.devices);
    for (auto const& run : study.runs) {
      Workload const& w = *find_workload(run.workload);
      std::string problem = std::format("{} {}", run.workload, run.size.label());
      Configuration shown = config;
      shown.threads = have;
      progress.line(std::format("{} on {}", problem, shown.label()));
      Instance inst;
      try {
        inst = w.make(run.size, config);
      } catch (tessel::Error const& e) {
        throw StudyError(std::format("workload '{}' of size {} on {}: {}", run.workload, run.size.label(),
                                     shown.label(), e.what()));
      }
      auto limit_call = [&] {
        if (w.bound == Bound::memory) limits.triad();
        else if (w.bound == Bound::compute) limits.gemm();
        else limits.copy();
      };
      double limit_work = w.bound == Bound::memory    ? limits.triad.bytes() / 1e9
                          : w.bound == Bound::compute ? Limits::gemm_flops() / 1e9
                                                      : limits.copy_bytes() / 1e9;
      double work = w.bound == Bound::compute ? inst.flops / 1e9 : inst.bytes / 1e9;
      int calls = calls_for(inst.call, study.min_time);
      int limit_calls = calls_for(limit_call, std::min(study.min_time, 0.05));
      std::vector<double> seconds, foms, limit_foms;
      for (int r = 0; r < study.repetitions; ++r) {
        double s = time_calls(inst.call, calls);
        double l = time_calls(limit_call, limit_calls);
        seconds.push_back(s);
        foms.push_back(work / s);
        limit_foms.push_back(limit_work / l);
      }
      Row row;
      row.problem = problem;
      row.platform = platform;
      row.application = shown.label();
      row.unit = w.bound == Bound::compute ? "GFLOP/s" : "GB/s";
      row.fom = median(foms);
      row.fom_min = *std::min_element(foms.begin(), foms.end());
      row.fom_max = *std::max_element(foms.begin(), foms.end());
      double mean = 0, var = 0;
      for (double f : foms) mean += f / static_cast<double>(foms.size());
      for (double f : foms) var += (f - mean) * (f - mean) / std::max<double>(1, static_cast<double>(foms.size()) - 1);
      row.fom_stddev = std::sqrt(var);
      row.median_s = median(seconds);
      row.repetitions = study.repetitions;
      row.limit_name = w.bound == Bound::memory ? "stream_triad" : w.bound == Bound::compute ? "blas_sgemm" : "copy";
      row.limit = median(limit_foms);
      if (w.bound == Bound::memory) row.peak_GBps = row.limit;
      if (w.bound == Bound::compute) row.peak_GFLOPps = row.limit;
      row.peak_fma_GFLOPps = fma_peak;
      row.flops = inst.flops;
      row.bytes = inst.bytes;
      row.workload = run.workload;
      row.size = run.size.label();
      row.devices = config.devices;
      row.threads = have;
      row.mesh = config.mesh_label();
      // Where the time goes: a few profiled calls after the timed ones (profile fences between
      // instructions, so these calls are not part of the figure of merit).
      if (inst.profile) {
        std::vector<std::vector<InstructionTime>> profiles;
        for (int p = 0; p < profiled_calls; ++p) profiles.push_back(inst.profile());
        row.instructions = median_instructions(profiles);
      }
      rows.push_back(std::move(row));
      inst = {};  // frees the inputs before the next run allocates
    }
  }
  return rows;
}

// The platform limits are the best each was measured at on that platform in this study (over
// thread counts and runs), so that arch eff compares every configuration with the same ceiling.
// (Presets of other backends are other platforms, with limits of their own.)
void platform_limits(std::vector<Row>& rows) {
  std::map<std::pair<std::string, std::string>, double> best;
  std::map<std::string, std::tuple<double, double, double>> peaks;  // platform -> (GB/s, GEMM, FMA)
  for (auto const& r : rows) {
    auto& b = best[{r.platform, r.limit_name}];
    b = std::max(b, r.limit);
    auto& [bw, flops, fma] = peaks[r.platform];
    bw = std::max(bw, r.peak_GBps);
    flops = std::max(flops, r.peak_GFLOPps);
    fma = std::max(fma, r.peak_fma_GFLOPps);
  }
  for (auto& r : rows) {
    r.limit = best[{r.platform, r.limit_name}];
    std::tie(r.peak_GBps, r.peak_GFLOPps, r.peak_fma_GFLOPps) = peaks[r.platform];
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
    Configuration shown = config;
    shown.threads = threads;
    for (auto const& run : study.runs) {
      Row row;
      row.problem = std::format("{} {}", run.workload, run.size.label());
      row.platform = std::format("[{}] unsupported", preset);
      row.application = shown.label();
      row.unit = find_workload(run.workload)->bound == Bound::compute ? "GFLOP/s" : "GB/s";
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

std::string read_text(std::string const& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StudyError(std::format("cannot read '{}'", path));
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(fs::path const& p, std::string const& text) {
  std::ofstream out(p, std::ios::binary);
  out << text;
  if (!out) throw StudyError(std::format("cannot write '{}'", p.string()));
}

void write_results(fs::path const& dir, std::string const& stem, std::string const& name, std::vector<Row>& rows) {
  compute_efficiencies(rows);
  auto pp = portability(rows);
  fs::create_directories(dir);
  write_file(dir / (stem + ".csv"), to_csv(rows));
  std::vector<std::pair<std::string, std::string>> env;
  for (char const* var : {"OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES", "OMP_WAIT_POLICY", "OPENBLAS_NUM_THREADS",
                          "OPENBLAS_CORETYPE", "TESSEL_NUM_DEVICES"}) {
    char const* value = std::getenv(var);
    env.emplace_back(var, value ? value : "(unset)");
  }
  write_file(dir / (stem + ".json"), to_json(name, rows, pp, env));
  write_file(dir / "pp.csv", to_csv(pp));
}

// What scripts/study_jax.py needs to run the same problems as a second application.
std::string problems_json(Study const& study, std::string const& platform, std::vector<Row> const& rows) {
  nlohmann::ordered_json j;
  j["platform"] = platform;
  j["repetitions"] = study.repetitions;
  j["min_time"] = study.min_time;
  std::set<int> devices;
  for (auto const& c : study.configurations) devices.insert(c.devices);
  j["devices"] = devices;
  auto& list = j["problems"] = nlohmann::ordered_json::array();
  std::set<std::string> seen;
  for (auto const& run : study.runs) {
    std::string problem = std::format("{} {}", run.workload, run.size.label());
    if (!seen.insert(problem).second) continue;
    nlohmann::ordered_json size = nlohmann::ordered_json::object();
    for (auto const& [k, v] : run.size.dims) size[k] = v;
    double bytes = 0, flops = 0;
    for (auto const& r : rows)
      if (r.problem == problem) bytes = r.bytes, flops = r.flops;
    list.push_back({{"problem", problem}, {"workload", run.workload}, {"size", size}, {"bytes", bytes}, {"flops", flops},
                    {"unit", find_workload(run.workload)->bound == Bound::compute ? "GFLOP/s" : "GB/s"}});
  }
  return j.dump(2) + "\n";
}

int usage(std::ostream& out, int code) {
  out << "usage: tessel_study FILE.toml [--out DIR] [--platform NAME]\n"
         "       tessel_study --merge A.csv B.csv ... [--out DIR]\n"
         "       tessel_study --list   (the built-in workloads and their size parameters)\n";
  return code;
}

}  // namespace

int main(int argc, char* argv[]) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string out_dir, platform, file;
  std::vector<std::string> merge;
  bool merging = false, list = false;
  // Worker mode (internal): --worker THREADS ALL POLICY PRESET DONE TOTAL ELAPSED OUT.csv
  std::vector<std::string> worker;
  for (std::size_t i = 0; i < args.size(); ++i) {
    auto const& a = args[i];
    auto value = [&](char const* what) -> std::string {
      if (i + 1 >= args.size()) {
        std::cerr << "tessel_study: " << a << " needs " << what << "\n";
        std::exit(2);
      }
      return args[++i];
    };
    if (a == "--out") out_dir = value("a folder");
    else if (a == "--platform") platform = value("a name");
    else if (a == "--merge") merging = true;
    else if (a == "--list") list = true;
    else if (a == "--help" || a == "-h") return usage(std::cout, 0);
    else if (a == "--worker") {
      for (int k = 0; k < 8; ++k) worker.push_back(value("THREADS ALL POLICY PRESET DONE TOTAL ELAPSED OUT"));
    } else if (a.starts_with("--kokkos")) continue;
    else if (a.starts_with("-")) {
      std::cerr << "tessel_study: unknown option '" << a << "'\n";
      return usage(std::cerr, 2);
    } else if (merging) merge.push_back(a);
    else if (file.empty()) file = a;
    else {
      std::cerr << "tessel_study: one study file at a time (got '" << file << "' and '" << a << "')\n";
      return 2;
    }
  }
  try {
    if (list) {
      for (auto const& w : workloads()) {
        std::string params;
        for (auto const& [k, v] : w.defaults) params += std::format("{}{} = {}", params.empty() ? "" : ", ", k, v);
        std::cout << std::format("{:16} {}\n{:16} sizes: {{{}}}\n", w.name, w.description, "", params);
      }
      return 0;
    }
    if (merging) {
      if (merge.empty()) {
        std::cerr << "tessel_study: --merge needs result files (A.csv B.csv ...)\n";
        return 2;
      }
      std::vector<Row> rows;
      for (auto const& m : merge) {
        auto part = read_csv(m);
        rows.insert(rows.end(), part.begin(), part.end());
      }
      // Efficiencies are recomputed over the merged set: the best fom on a platform may come from
      // another file (a JAX run), and a limit from the rows that measured one.
      for (auto& r : rows) r.arch_eff = r.app_eff = 0;
      fs::path dir = out_dir.empty() ? fs::path(merge[0]).parent_path() : fs::path(out_dir);
      if (dir.empty()) dir = ".";
      write_results(dir, "merged", "merged", rows);
      auto pp = portability(rows);
      std::set<std::string> platforms;
      for (auto const& r : rows) platforms.insert(r.platform);
      std::cout << std::format("merged {} rows of {} files over {} platforms into {}/merged.csv; PP (app eff) per problem "
                               "and application:\n",
                               rows.size(), merge.size(), platforms.size(), dir.string());
      for (auto const& p : pp)
        std::cout << std::format("  {:28} {:28} PP {:.3f}{}\n", p.problem, p.application, p.pp_app,
                                 p.unsupported.empty() ? "" : " (unsupported on " + std::to_string(p.unsupported.size()) + " platforms)");
      return 0;
    }
    if (file.empty()) return usage(std::cerr, 2);
    Study study = read_study(file);  // every error in the file shows before anything runs
    if (platform.empty()) platform = study.platform;

    if (!worker.empty()) {
      int threads = std::stoi(worker[0]);
      std::string nt = "--kokkos-num-threads=" + std::to_string(threads);
      // argv[argc] is null, as in main's: Kokkos moves the arguments it takes out, the null too.
      std::vector<char*> kargv = {argv[0], nt.data(), nullptr};
      int kargc = static_cast<int>(kargv.size()) - 1;
      tessel::ScopeGuard guard(kargc, kargv.data());
      std::string preset = worker[3] == "-" ? "" : worker[3];
      // A preset's build is a platform of its own: this machine, its backend and the preset's name.
      if (!preset.empty()) platform = std::format("{} [{}]", platform_label(), preset);
      if (platform.empty()) platform = platform_label();
      Progress progress{std::stoi(worker[4]), std::stoi(worker[5]), std::stod(worker[6])};
      auto rows = run_configurations(study, platform, std::stoi(worker[1]), worker[2] == "-" ? "" : worker[2], preset,
                                     progress);
      write_file(worker[7], to_csv(rows));
      write_file(worker[7] + ".instructions.json", instructions_to_json(rows));
      return 0;
    }

    fs::path dir = out_dir.empty() ? fs::path("build/study") / study.name : fs::path(out_dir);
    fs::create_directories(dir);
    // One child per (preset, thread count, wait policy); threads = 0 means all of this machine's.
    int all = 0;
    {
      char const* env = std::getenv("OMP_NUM_THREADS");
      all = env && std::atoi(env) > 0 ? std::atoi(env) : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    }
    std::map<std::tuple<std::string, int, std::string>, int> children;  // (preset, threads, policy) -> configurations
    for (auto const& c : study.configurations) ++children[{c.preset, c.threads ? c.threads : all, c.wait_policy}];
    int total = 0;
    for (auto const& [key, n] : children) total += n * static_cast<int>(study.runs.size());
    std::cerr << std::format("study '{}': {} runs ({} problems x {} configurations), {} repetitions each, into {}\n",
                             study.name, total, study.runs.size(), study.configurations.size(), study.repetitions,
                             dir.string());
    auto t0 = Clock::now();
    std::vector<Row> rows;
    int done = 0;
    std::string self = fs::read_symlink("/proc/self/exe").string();
    for (auto const& [key, n] : children) {
      auto const& [preset, threads, policy] = key;
      // A preset's configurations run in that preset's build of this tool, beside this one
      // (build/<preset>/tessel_study); without one, or when it fails, they are unsupported here.
      fs::path binary = preset.empty() ? fs::path(self) : fs::path(self).parent_path().parent_path() / preset / "tessel_study";
      auto unsupported = [&](std::string const& why) {
        std::cerr << std::format("tessel_study: preset '{}' {}: its {} runs count as unsupported (fom 0, PP 0)\n",
                                 preset, why, n * static_cast<int>(study.runs.size()));
        auto none = unsupported_rows(study, preset, threads, policy);
        rows.insert(rows.end(), none.begin(), none.end());
        done += n * static_cast<int>(study.runs.size());
      };
      if (!preset.empty() && !fs::exists(binary)) {
        unsupported(std::format("is not built here (no {})", binary.string()));
        continue;
      }
      fs::path part = dir / std::format("part_{}t{}{}.csv", preset.empty() ? "" : preset + "_", threads, policy);
      std::string cmd = std::format("OMP_NUM_THREADS={} {}'{}' '{}' --worker {} {} {} {} {} {} {} '{}'", threads,
                                    policy.empty() ? "" : "OMP_WAIT_POLICY=" + policy + " ", binary.string(), file,
                                    threads, all, policy.empty() ? "-" : policy, preset.empty() ? "-" : preset, done,
                                    total, seconds_since(t0), part.string());
      if (!platform.empty()) cmd += std::format(" --platform '{}'", platform);
      int rc = std::system(cmd.c_str());
      if (rc != 0 && !preset.empty()) {
        unsupported(std::format("failed here (exit {})", rc));
        continue;
      }
      if (rc != 0) {
        std::cerr << std::format("tessel_study: the runs with {} threads{} failed (exit {})\n", threads,
                                 policy.empty() ? "" : ", " + policy + " waits", rc);
        return 1;
      }
      auto part_rows = read_csv(part.string());
      std::string instructions = part.string() + ".instructions.json";
      attach_instructions(part_rows, read_text(instructions), instructions);
      rows.insert(rows.end(), part_rows.begin(), part_rows.end());
      fs::remove(part);
      fs::remove(instructions);
      done += n * static_cast<int>(study.runs.size());
    }
    platform_limits(rows);
    write_results(dir, "results", study.name, rows);
    write_file(dir / "problems.json", problems_json(study, rows.empty() ? platform : rows[0].platform, rows));
    std::cerr << std::format("study '{}': {} runs in {:.0f} s; results in {}/results.csv, results.json, pp.csv\n",
                             study.name, rows.size(), seconds_since(t0), dir.string());
    for (auto const& r : rows)
      std::cout << std::format("{:28} {:22} {:9.2f} {:8} (min {:.2f}, max {:.2f})  arch eff {:.2f} of {}  app eff {:.2f}\n",
                               r.problem, r.application, r.fom, r.unit, r.fom_min, r.fom_max, r.arch_eff, r.limit_name,
                               r.app_eff);
  } catch (StudyError const& e) {
    std::cerr << "tessel_study: " << e.what() << "\n";
    return 1;
  } catch (std::exception const& e) {  // tessel::Error, or a file system error
    std::cerr << "tessel_study: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
