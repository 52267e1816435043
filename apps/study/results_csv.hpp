#pragma once
// The study's results as CSV: rows in the P3 Analysis Library's layout (problem, platform,
// application, fom, plus "arch eff" and "app eff" columns), so that its pandas routines read the
// file as it is, and the PP metric per (problem, application) as pp.csv.
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "portability.hpp"
#include "result_row.hpp"

namespace tessel::study {

// The CSV header, in order: the P3 columns first.
std::span<std::string const> csv_columns();
std::string to_csv(std::span<Row const> rows);
// Reads a CSV written by to_csv (or by scripts/study_jax.py); `source` names it in messages. The
// four P3 columns and `unit` are required; the others default to 0 or empty.
std::vector<Row> parse_csv(std::string_view text, std::string const& source);
std::vector<Row> read_csv(std::string const& path);

std::string to_csv(std::span<Portability const> pp);

}  // namespace tessel::study
