#pragma once
// The files a study or a merge of studies leaves: STEM.csv, STEM.json and pp.csv in one folder.
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "result_row.hpp"

namespace tessel::study {

// Computes the rows' efficiencies (compute_efficiencies) and PP, and writes DIR/STEM.csv,
// DIR/STEM.json (named `study_name`, with the thread environment) and DIR/pp.csv.
void write_results(std::filesystem::path const& dir, std::string const& stem, std::string const& study_name,
                   std::vector<Row>& rows);

// The rows of several result files (of several machines, or a JAX run) as one set, their
// efficiencies cleared: over the merged set the best fom on a platform may come from another file,
// and a limit from the rows that measured one, so write_results computes them again.
std::vector<Row> merge_results(std::span<std::string const> csv_paths);

}  // namespace tessel::study
