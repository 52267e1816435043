#include "result_files.hpp"

#include <cstdlib>
#include <utility>

#include "portability.hpp"
#include "results_csv.hpp"
#include "results_json.hpp"
#include "text_files.hpp"

namespace tessel::study {

void write_results(std::filesystem::path const& dir, std::string const& stem, std::string const& study_name,
                   std::vector<Row>& rows) {
  compute_efficiencies(rows);
  auto pp = portability(rows);
  std::filesystem::create_directories(dir);
  write_file(dir / (stem + ".csv"), to_csv(rows));
  std::vector<std::pair<std::string, std::string>> environment;
  for (char const* var : {"OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES", "OMP_WAIT_POLICY", "OPENBLAS_NUM_THREADS",
                          "OPENBLAS_CORETYPE", "TESSEL_NUM_DEVICES"}) {
    char const* value = std::getenv(var);
    environment.emplace_back(var, value ? value : "(unset)");
  }
  write_file(dir / (stem + ".json"), to_json(study_name, rows, pp, environment));
  write_file(dir / "pp.csv", to_csv(pp));
}

std::vector<Row> merge_results(std::span<std::string const> csv_paths) {
  std::vector<Row> rows;
  for (auto const& path : csv_paths) {
    auto part = read_csv(path);
    rows.insert(rows.end(), part.begin(), part.end());
  }
  for (auto& r : rows) r.arch_eff = r.app_eff = 0;
  return rows;
}

}  // namespace tessel::study
