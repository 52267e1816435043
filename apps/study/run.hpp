#pragma once
// Running a study: one worker process (worker.hpp) per (preset, thread count, wait policy) of its
// configurations, whose rows are gathered, put against the platform's best measured limits and
// written with the study's other files.
#include <filesystem>
#include <string>
#include <vector>

#include "result_row.hpp"
#include "study.hpp"

namespace tessel::study {

// Runs `study` (read from `study_file`, which the workers read again) and writes DIR/results.csv,
// results.json, pp.csv and problems.json; returns the rows. `platform`: the study's (empty: each
// worker's machine). A worker of this build that fails is a StudyError; a preset's that fails, or
// is not built, makes its runs unsupported.
std::vector<Row> run_study(Study const& study, std::string const& study_file, std::filesystem::path const& dir,
                           std::string const& platform);

}  // namespace tessel::study
