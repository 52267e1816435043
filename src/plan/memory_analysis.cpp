// explain's memory section (plan/memory_analysis.hpp; the analysis itself is constexpr, in the header).
#include "tessel/plan/memory_analysis.hpp"

#include <format>

namespace tessel::plan {

namespace {
std::string bytes_text(std::int64_t b) {
  if (b >= (std::int64_t{1} << 30)) return std::format("{} bytes ({:.2f} GiB)", b, static_cast<double>(b) / (1 << 30));
  if (b >= (std::int64_t{1} << 20)) return std::format("{} bytes ({:.2f} MiB)", b, static_cast<double>(b) / (1 << 20));
  return std::format("{} bytes", b);
}
}  // namespace

std::string memory_analysis_text(MemoryAnalysis const& m, std::string_view indent) {
  if (m.device < 0) return {};
  DeviceMemory const& d = *m.of(m.device);
  std::string s = std::format("{}memory, per device: peak {} on device {} after {}; arguments {}, output {}, "
                              "temporaries {}\n",
                              indent, bytes_text(m.peak_bytes), m.device,
                              m.peak_step < 0 ? std::string("none (the arguments)") : m.peak_label,
                              bytes_text(d.argument_bytes), bytes_text(d.output_bytes), bytes_text(d.temporary_bytes));
  if (!m.largest_live.empty()) {
    s += std::format("{}  largest live there:", indent);
    for (std::size_t k = 0; k < m.largest_live.size(); ++k)
      s += std::format("{} {} ({})", k ? "," : "", m.largest_live[k].what, bytes_text(m.largest_live[k].bytes));
    s += "\n";
  }
  return s;
}

}  // namespace tessel::plan
