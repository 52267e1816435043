#include "study.hpp"

#include <format>

namespace tessel::study {

std::int64_t Size::operator[](std::string_view name) const {
  for (auto const& [k, v] : dims)
    if (k == name) return v;
  throw StudyError(std::format("size {} has no parameter '{}'", label(), name));
}

std::string Size::label() const {
  std::string s;
  // Sizes in MiB say so ("8MiB"); dimensions are joined ("2048x1024").
  for (auto const& [k, v] : dims) s += (s.empty() ? "" : "x") + std::to_string(v) + (k == "mb" ? "MiB" : "");
  return s;
}

std::string Configuration::mesh_label() const {
  std::string m;
  for (int s : mesh) m += (m.empty() ? "" : "x") + std::to_string(s);
  return m;
}

std::string Configuration::label() const {
  return std::format("tessel d{} m{} t{}{}", devices, mesh_label(), threads, wait_policy.empty() ? "" : " " + wait_policy);
}

std::string WorkloadRun::problem() const { return std::format("{} {}", workload, size.label()); }

}  // namespace tessel::study
