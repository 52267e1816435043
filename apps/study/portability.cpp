#include "portability.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

namespace tessel::study {

std::map<std::string, Peaks> platform_peaks(std::span<Row const> rows) {
  std::map<std::string, Peaks> peaks;
  for (auto const& r : rows) {
    auto& p = peaks[r.platform];
    p.GBps = std::max(p.GBps, r.peak_GBps);
    p.GFLOPps = std::max(p.GFLOPps, r.peak_GFLOPps);
    p.fma_GFLOPps = std::max(p.fma_GFLOPps, r.peak_fma_GFLOPps);
  }
  return peaks;
}

void compute_efficiencies(std::vector<Row>& rows) {
  // The platform's limit for a (workload, unit): the largest any row of it carries (a second
  // application, e.g. JAX, measures none of its own).
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<double, std::string>> limit;
  for (auto const& r : rows) {
    auto& l = limit[{r.platform, r.workload, r.unit}];
    if (r.limit > l.first) l = {r.limit, r.limit_name};
  }
  auto peaks = platform_peaks(rows);
  std::map<std::pair<std::string, std::string>, double> best;  // (problem, platform) -> best fom
  for (auto const& r : rows) {
    auto& b = best[{r.problem, r.platform}];
    b = std::max(b, r.fom);
  }
  for (auto& r : rows) {
    auto const& l = limit[{r.platform, r.workload, r.unit}];
    if (!(r.limit > 0)) {
      r.limit = l.first;
      r.limit_name = l.second;
    }
    auto const& p = peaks[r.platform];
    if (!(r.peak_GBps > 0)) r.peak_GBps = p.GBps;
    if (!(r.peak_GFLOPps > 0)) r.peak_GFLOPps = p.GFLOPps;
    if (!(r.peak_fma_GFLOPps > 0)) r.peak_fma_GFLOPps = p.fma_GFLOPps;
    r.arch_eff = r.limit > 0 ? r.fom / r.limit : 0;
    double b = best[{r.problem, r.platform}];
    r.app_eff = b > 0 ? r.fom / b : 0;
  }
}

double performance_portability(std::span<std::optional<double> const> efficiencies) {
  if (efficiencies.empty()) return 0;
  double sum = 0;
  for (auto const& e : efficiencies) {
    if (!e || !(*e > 0)) return 0;
    sum += 1.0 / *e;
  }
  return static_cast<double>(efficiencies.size()) / sum;
}

std::vector<Portability> portability(std::span<Row const> rows) {
  std::map<std::string, std::set<std::string>> platforms;          // problem -> H
  std::set<std::pair<std::string, std::string>> problem_applications;
  // (problem, application, platform) -> the best (app eff, arch eff) of its rows
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<double, double>> efficiencies;
  for (auto const& r : rows) {
    platforms[r.problem].insert(r.platform);
    problem_applications.insert({r.problem, r.application});
    if (!(r.fom > 0)) continue;  // a figure of 0 marks a run that could not happen there (as P3 reads it)
    auto& e = efficiencies[{r.problem, r.application, r.platform}];
    e.first = std::max(e.first, r.app_eff);
    e.second = std::max(e.second, r.arch_eff);
  }
  std::vector<Portability> out;
  for (auto const& [problem, application] : problem_applications) {
    Portability p{problem, application, {}, {}, 0, 0};
    std::vector<std::optional<double>> app, arch;
    for (auto const& platform : platforms[problem]) {
      p.platforms.push_back(platform);
      auto it = efficiencies.find({problem, application, platform});
      if (it == efficiencies.end()) {
        p.unsupported.push_back(platform);
        app.emplace_back();
        arch.emplace_back();
      } else {
        app.emplace_back(it->second.first);
        arch.emplace_back(it->second.second);
      }
    }
    p.pp_app = performance_portability(app);
    p.pp_arch = performance_portability(arch);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace tessel::study
