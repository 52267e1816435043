#pragma once
// Performance-portability studies (./tessel study): what a study runs. The study file that describes
// it is read by study_file.hpp; the results are rows in the P3 Analysis Library's layout
// (result_row.hpp, results_csv.hpp), so its pandas routines read the CSV as it is.
//
// Terms (Pennycook, Sewall, Lee, "Implications of a metric for performance portability", 2017):
//   problem      a workload at one size ("softmax 2048x1024");
//   platform     the machine and backend a study ran on ("AMD EPYC 7B13 / OpenMP");
//   application  what solved the problem there: tessel in one configuration ("tessel d8 m4x2 t2"),
//                or another code running the same workload ("jax d8");
//   arch eff     fom / the platform's measured limit (STREAM triad, BLAS GEMM peak or copy);
//   app eff      fom / the best fom of any application for that problem on that platform;
//   PP           the harmonic mean of an application's efficiencies over the platforms that ran the
//                problem, 0 when the application did not run it on one of them.
// Every figure of merit is a throughput (GB/s or GFLOP/s): higher is better.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessel::study {

// A study file or result file that cannot be used; the message names the offending item.
struct StudyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A problem size: named dimensions in the workload's order ({rows, 2048}, {cols, 1024}).
struct Size {
  std::vector<std::pair<std::string, std::int64_t>> dims;
  [[nodiscard]] std::int64_t operator[](std::string_view name) const;
  [[nodiscard]] std::string label() const;  // "2048x1024"
};

// One way to run tessel: a device count, a mesh over those devices and a host thread count.
struct Configuration {
  int devices = 8;
  std::vector<int> mesh;           // its sizes; product == devices
  std::vector<std::string> axes;   // its names
  int threads = 0;                 // host threads; 0: all the process has
  // OMP_WAIT_POLICY for the run ("active" or "passive"); empty: the environment's. On a shared,
  // oversubscribed host, spinning threads wait at every barrier for a descheduled one.
  std::string wait_policy;
  // A CMake preset (CMakePresets.json) whose build runs this configuration: build/<preset>/
  // tessel_study beside this tool, a platform of its own ("<CPU> / <backend> [<preset>]"). Empty:
  // this tool's own build. A preset not built here, or whose run fails, is unsupported (fom 0).
  std::string preset;
  [[nodiscard]] std::string label() const;       // "tessel d8 m4x2 t2", "tessel d8 m8 t2 passive"
  [[nodiscard]] std::string mesh_label() const;  // "4x2"
};

// One problem of the study: a workload at one size.
struct WorkloadRun {
  std::string workload;
  Size size;
  [[nodiscard]] std::string problem() const;  // "softmax 2048x1024"
};

struct Study {
  std::string name = "study";
  std::string platform;  // empty: this machine's CPU and the backend (platform_label())
  int repetitions = 5;
  double min_time = 0.05;  // seconds per repetition (each times as many calls as that takes)
  std::vector<WorkloadRun> runs;
  std::vector<Configuration> configurations;
};

}  // namespace tessel::study
