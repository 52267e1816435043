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
// --kokkos-num-threads set; the parent gathers their rows (run.hpp, worker.hpp).
#include <cstdlib>
#include <filesystem>
#include <format>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "portability.hpp"
#include "result_files.hpp"
#include "run.hpp"
#include "study_file.hpp"
#include "worker.hpp"
#include "workloads.hpp"

namespace fs = std::filesystem;
using namespace tessel::study;

namespace {

int usage(std::ostream& out, int code) {
  out << "usage: tessel_study FILE.toml [--out DIR] [--platform NAME]\n"
         "       tessel_study --merge A.csv B.csv ... [--out DIR]\n"
         "       tessel_study --list   (the built-in workloads and their size parameters)\n";
  return code;
}

void list_workloads() {
  for (auto const& w : workloads()) {
    std::string params;
    for (auto const& [k, v] : w.defaults) params += std::format("{}{} = {}", params.empty() ? "" : ", ", k, v);
    std::cout << std::format("{:16} {}\n{:16} sizes: {{{}}}\n", w.name, w.description, "", params);
  }
}

void merge_and_report(std::vector<std::string> const& files, std::string const& out_dir) {
  auto rows = merge_results(files);
  fs::path dir = out_dir.empty() ? fs::path(files[0]).parent_path() : fs::path(out_dir);
  if (dir.empty()) dir = ".";
  write_results(dir, "merged", "merged", rows);
  auto pp = portability(rows);
  std::set<std::string> platforms;
  for (auto const& r : rows) platforms.insert(r.platform);
  std::cout << std::format("merged {} rows of {} files over {} platforms into {}/merged.csv; PP (app eff) per problem "
                           "and application:\n",
                           rows.size(), files.size(), platforms.size(), dir.string());
  for (auto const& p : pp)
    std::cout << std::format("  {:28} {:28} PP {:.3f}{}\n", p.problem, p.application, p.pp_app,
                             p.unsupported.empty() ? "" : " (unsupported on " + std::to_string(p.unsupported.size()) + " platforms)");
}

void print_rows(std::vector<Row> const& rows) {
  for (auto const& r : rows)
    std::cout << std::format("{:28} {:22} {:9.2f} {:8} (min {:.2f}, max {:.2f})  arch eff {:.2f} of {}  app eff {:.2f}\n",
                             r.problem, r.application, r.fom, r.unit, r.fom_min, r.fom_max, r.arch_eff, r.limit_name,
                             r.app_eff);
}

}  // namespace

int main(int argc, char* argv[]) {
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string out_dir, platform, file;
  std::vector<std::string> merge_files;
  bool merging = false, list = false;
  std::vector<std::string> worker;  // internal: --worker and WorkerTask's arguments (worker.hpp)
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
      for (int k = 0; k < WorkerTask::argument_count; ++k)
        worker.push_back(value("THREADS ALL POLICY PRESET DONE TOTAL ELAPSED OUT"));
    } else if (a.starts_with("--kokkos")) continue;
    else if (a.starts_with("-")) {
      std::cerr << "tessel_study: unknown option '" << a << "'\n";
      return usage(std::cerr, 2);
    } else if (merging) merge_files.push_back(a);
    else if (file.empty()) file = a;
    else {
      std::cerr << "tessel_study: one study file at a time (got '" << file << "' and '" << a << "')\n";
      return 2;
    }
  }
  try {
    if (list) {
      list_workloads();
      return 0;
    }
    if (merging) {
      if (merge_files.empty()) {
        std::cerr << "tessel_study: --merge needs result files (A.csv B.csv ...)\n";
        return 2;
      }
      merge_and_report(merge_files, out_dir);
      return 0;
    }
    if (file.empty()) return usage(std::cerr, 2);
    Study study = read_study(file);  // every error in the file shows before anything runs
    if (platform.empty()) platform = study.platform;
    if (!worker.empty()) {
      run_worker(argv[0], study, platform, WorkerTask::parse(worker));
      return 0;
    }
    fs::path dir = out_dir.empty() ? fs::path("build/study") / study.name : fs::path(out_dir);
    print_rows(run_study(study, file, dir, platform));
  } catch (StudyError const& e) {
    std::cerr << "tessel_study: " << e.what() << "\n";
    return 1;
  } catch (std::exception const& e) {  // tessel::Error, or a file system error
    std::cerr << "tessel_study: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
