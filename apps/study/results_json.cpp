// The study's results as JSON: the whole document (results.json), the instruction lists a worker
// process hands its parent, and the problems a second application runs (problems.json).
#include "results_json.hpp"

#include <algorithm>
#include <format>
#include <nlohmann/json.hpp>
#include <set>

#include "workloads.hpp"

namespace tessel::study {

namespace {
nlohmann::ordered_json instructions_of(Row const& r) {
  auto list = nlohmann::ordered_json::array();
  for (auto const& i : r.instructions)
    list.push_back({{"call", i.call},
                    {"step", i.step},
                    {"label", i.label},
                    {"kind", i.kind},
                    {"measured_us", i.measured_us},
                    {"estimate_us", i.estimate_us},
                    {"flops", i.flops},
                    {"bytes", i.bytes}});
  return list;
}
}  // namespace

std::string instructions_to_json(std::span<Row const> rows) {
  auto j = nlohmann::ordered_json::array();
  for (auto const& r : rows) j.push_back(instructions_of(r));
  return j.dump() + "\n";
}

void attach_instructions(std::vector<Row>& rows, std::string_view json, std::string const& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
    if (!j.is_array() || j.size() != rows.size())
      throw StudyError(std::format("{}: {} instruction lists for {} result rows", source, j.is_array() ? j.size() : 0,
                                   rows.size()));
    for (std::size_t r = 0; r < rows.size(); ++r)
      for (auto const& i : j[r])
        rows[r].instructions.push_back({i.at("call").get<int>(), i.at("step").get<std::size_t>(),
                                        i.at("label").get<std::string>(), i.at("kind").get<std::string>(),
                                        i.at("measured_us").get<double>(), i.at("estimate_us").get<double>(),
                                        i.at("flops").get<double>(), i.at("bytes").get<double>()});
  } catch (nlohmann::json::exception const& e) {
    throw StudyError(std::format("{}: not a list of instruction lists: {}", source, e.what()));
  }
}

std::string to_json(std::string const& study_name, std::span<Row const> rows, std::span<Portability const> pp,
                    std::vector<std::pair<std::string, std::string>> const& environment) {
  nlohmann::ordered_json j;
  j["study"] = study_name;
  j["environment"] = nlohmann::ordered_json::object();
  for (auto const& [k, v] : environment) j["environment"][k] = v;
  auto& results = j["results"] = nlohmann::ordered_json::array();
  nlohmann::ordered_json limits = nlohmann::ordered_json::object();
  for (auto const& r : rows) {
    results.push_back({{"problem", r.problem},       {"platform", r.platform},
                       {"application", r.application}, {"fom", r.fom},
                       {"unit", r.unit},              {"arch_eff", r.arch_eff},
                       {"app_eff", r.app_eff},        {"limit", r.limit},
                       {"limit_name", r.limit_name},  {"fom_min", r.fom_min},
                       {"fom_max", r.fom_max},        {"fom_stddev", r.fom_stddev},
                       {"median_s", r.median_s},      {"repetitions", r.repetitions},
                       {"flops", r.flops},            {"bytes", r.bytes},
                       {"workload", r.workload},      {"size", r.size},
                       {"devices", r.devices},        {"mesh", r.mesh},
                       {"threads", r.threads}});
    if (!r.instructions.empty()) results.back()["instructions"] = instructions_of(r);
    if (!limits.contains(r.platform)) limits[r.platform] = nlohmann::ordered_json::object();
    auto& l = limits[r.platform];
    if (r.peak_GBps > 0) l["stream_triad_GBps"] = std::max(l.value("stream_triad_GBps", 0.0), r.peak_GBps);
    if (r.peak_GFLOPps > 0) l["blas_sgemm_GFLOPps"] = std::max(l.value("blas_sgemm_GFLOPps", 0.0), r.peak_GFLOPps);
    if (r.peak_fma_GFLOPps > 0)
      l["fma_peak_GFLOPps"] = std::max(l.value("fma_peak_GFLOPps", 0.0), r.peak_fma_GFLOPps);
    if (r.limit_name == "copy") l["copy_GBps"] = std::max(l.value("copy_GBps", 0.0), r.limit);
  }
  j["limits"] = limits;
  auto& p = j["portability"] = nlohmann::ordered_json::array();
  for (auto const& x : pp)
    p.push_back({{"problem", x.problem},
                 {"application", x.application},
                 {"platforms", x.platforms},
                 {"unsupported", x.unsupported},
                 {"pp_app_eff", x.pp_app},
                 {"pp_arch_eff", x.pp_arch}});
  return j.dump(2) + "\n";
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
    std::string problem = run.problem();
    if (!seen.insert(problem).second) continue;
    nlohmann::ordered_json size = nlohmann::ordered_json::object();
    for (auto const& [k, v] : run.size.dims) size[k] = v;
    double bytes = 0, flops = 0;
    for (auto const& r : rows)
      if (r.problem == problem) bytes = r.bytes, flops = r.flops;
    list.push_back({{"problem", problem}, {"workload", run.workload}, {"size", size}, {"bytes", bytes}, {"flops", flops},
                    {"unit", fom_unit(find_workload(run.workload)->bound)}});
  }
  return j.dump(2) + "\n";
}

}  // namespace tessel::study
