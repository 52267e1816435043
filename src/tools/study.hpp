#pragma once
// Performance-portability studies (./tessel study): the study file, the result rows, their CSV and
// JSON forms, and the metrics computed over them. The rows follow the P3 Analysis Library's layout
// (problem, platform, application, fom, plus "arch eff" and "app eff" columns), so its pandas
// routines read the CSV as it is.
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
#include <optional>
#include <span>
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

struct WorkloadRun {
  std::string workload;
  Size size;
};

struct Study {
  std::string name = "study";
  std::string platform;  // empty: this machine's CPU and the backend (platform_label())
  int repetitions = 5;
  double min_time = 0.05;  // seconds per repetition (each times as many calls as that takes)
  std::vector<WorkloadRun> runs;
  std::vector<Configuration> configurations;
};

// Parses and checks a study file, TOML or JSON (the same tables: {"study": {...}, "configuration":
// [{...}], "workload": [{...}]}); `source` names it in messages. Every workload, size parameter and
// configuration is checked before anything runs. read_study reads JSON when the name ends in .json.
Study parse_study(std::string_view toml_text, std::string const& source);
Study parse_study_json(std::string_view json_text, std::string const& source);
Study read_study(std::string const& path);

// One instruction of a profiled workload call (tessel::profile, tools/profile.hpp). `call` numbers
// the jitted functions one workload call runs (the transformer layer runs two halves), `step` is
// the instruction's index in that function's plan.
struct InstructionTime {
  int call = 0;
  std::size_t step = 0;
  std::string label, kind;
  double measured_us = 0;  // all devices together; in results, the median over the profiled calls
  double estimate_us = 0;  // the cost model's
  double flops = 0, bytes = 0;  // per device (bytes read and written)
};

// Per instruction, the median of measured_us over several profiles of the same call (which run
// the same plans, so the lists match); the first list's other fields.
std::vector<InstructionTime> median_instructions(std::vector<std::vector<InstructionTime>> const& profiles);

// One (problem, platform, application) result.
struct Row {
  std::string problem, platform, application;
  double fom = 0;          // median over the repetitions
  std::string unit;        // GB/s or GFLOP/s
  double fom_min = 0, fom_max = 0, fom_stddev = 0;
  double median_s = 0;     // seconds per call (median)
  int repetitions = 0;
  std::string limit_name;  // stream_triad, blas_sgemm or copy
  double limit = 0;        // the platform's measured limit, in `unit`
  double arch_eff = 0, app_eff = 0;
  double flops = 0, bytes = 0;  // per call; intensity = flops / bytes
  double peak_GBps = 0, peak_GFLOPps = 0;  // the platform's triad and GEMM peak (for rooflines)
  double peak_fma_GFLOPps = 0;  // every thread's vector FMAs (bench/fma_peak.hpp): above the GEMM's
  std::string workload, size;
  int devices = 0, threads = 0;
  std::string mesh;
  std::vector<InstructionTime> instructions;  // in the JSON only; empty where no plan runs
};

// The CSV header, in order: the P3 columns first.
std::span<std::string const> csv_columns();
std::string to_csv(std::span<Row const> rows);
// Reads a CSV written by to_csv (or by scripts/study_jax.py); `source` names it in messages. The
// four P3 columns and `unit` are required; the others default to 0 or empty.
std::vector<Row> parse_csv(std::string_view text, std::string const& source);
std::vector<Row> read_csv(std::string const& path);

// Fills `limit` of rows that lack it from another row of the same workload on the same platform
// and unit, then computes arch eff and app eff for every row.
void compute_efficiencies(std::vector<Row>& rows);

// Pennycook's metric over efficiencies of one application on the platforms H: |H| / sum(1 / e),
// 0 if any platform is unsupported (std::nullopt) or has efficiency 0.
double performance_portability(std::span<std::optional<double> const> efficiencies);

struct Portability {
  std::string problem, application;
  std::vector<std::string> platforms;    // H: every platform with a result for the problem
  std::vector<std::string> unsupported;  // those of H the application has no result on
  double pp_app = 0, pp_arch = 0;
};
// PP for every (problem, application) of the rows (after compute_efficiencies); where one
// (problem, platform, application) has several rows (merged runs), the best counts.
std::vector<Portability> portability(std::span<Row const> rows);
std::string to_csv(std::span<Portability const> pp);

// The study's results as one JSON document: rows, PP and the limits measured.
// `environment`: the variables that choose threads and their placement, as the run saw them.
std::string to_json(std::string const& study_name, std::span<Row const> rows, std::span<Portability const> pp,
                    std::vector<std::pair<std::string, std::string>> const& environment = {});

// The rows' instruction lists as JSON, one array per row in row order, and back onto the rows read
// from the CSV written beside it (how a study's worker process hands them to its parent); the
// counts must agree, else StudyError naming `source`.
std::string instructions_to_json(std::span<Row const> rows);
void attach_instructions(std::vector<Row>& rows, std::string_view json, std::string const& source);

// "<CPU model> / OpenMP": this machine and backend.
std::string platform_label();

}  // namespace tessel::study
