#pragma once
// The study's results as JSON: one document with the rows, PP and the limits measured
// (results.json), the rows' instruction lists as a worker process hands them to its parent, and
// the problems a second application (scripts/study_jax.py) runs (problems.json).
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "portability.hpp"
#include "result_row.hpp"
#include "study.hpp"

namespace tessel::study {

// `environment`: the variables that choose threads and their placement, as the run saw them.
std::string to_json(std::string const& study_name, std::span<Row const> rows, std::span<Portability const> pp,
                    std::vector<std::pair<std::string, std::string>> const& environment = {});

// The rows' instruction lists as JSON, one array per row in row order, and back onto the rows read
// from the CSV written beside it (how a study's worker process hands them to its parent); the
// counts must agree, else StudyError naming `source`.
std::string instructions_to_json(std::span<Row const> rows);
void attach_instructions(std::vector<Row>& rows, std::string_view json, std::string const& source);

// What scripts/study_jax.py needs to run the study's problems as a second application: the
// platform, repetitions, device counts, and each problem's size, bytes, flops and unit.
std::string problems_json(Study const& study, std::string const& platform, std::vector<Row> const& rows);

}  // namespace tessel::study
