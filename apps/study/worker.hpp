#pragma once
// A study's worker: a child process of tessel_study that runs the study's configurations of one
// thread count, wait policy and preset (a Kokkos process has one thread pool), and hands its rows
// to the parent in files. The parent (run.hpp) starts it with WorkerTask::arguments().
#include <span>
#include <string>

#include "study.hpp"

namespace tessel::study {

struct WorkerTask {
  int threads = 0;      // this process's host threads
  int all_threads = 0;  // what threads = 0 in the study file stands for: the parent's count
  std::string wait_policy, preset;  // empty: the environment's policy; this build
  int done = 0, total = 0;   // runs before this process's, and in the whole study (progress lines)
  double elapsed_s = 0;      // seconds the study ran before this process started
  std::string out_csv;       // its rows; their instruction lists go to out_csv + ".instructions.json"

  static constexpr int argument_count = 8;  // after --worker: THREADS ALL POLICY PRESET DONE TOTAL ELAPSED OUT
  [[nodiscard]] std::string arguments() const;  // "--worker ...", OUT quoted for the shell
  static WorkerTask parse(std::span<std::string const> words);  // the argument_count words after --worker
};

// Runs the task's share of the study in this process (Kokkos started with the task's threads;
// `program` is argv[0]) and writes its rows. `platform`: the study's (empty: this machine's).
void run_worker(char* program, Study const& study, std::string platform, WorkerTask const& task);

}  // namespace tessel::study
