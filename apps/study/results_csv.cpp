// The study's results as CSV in the P3 Analysis Library's layout, and PP as pp.csv.
#include "results_csv.hpp"

#include <cmath>
#include <format>
#include <map>

#include "study.hpp"
#include "text_files.hpp"

namespace tessel::study {

namespace {

std::vector<std::string> const columns = {
    "problem", "platform", "application", "fom", "unit", "arch eff", "app eff", "limit", "limit_name",
    "fom_min", "fom_max", "fom_stddev", "median_s", "repetitions", "flops", "bytes", "intensity",
    "peak_GBps", "peak_GFLOPps", "peak_FMA_GFLOPps", "workload", "size", "devices", "mesh", "threads"};

std::string quote(std::string const& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string number(double v) {
  if (!std::isfinite(v)) return "";
  return std::format("{:.10g}", v);
}

// Splits CSV text into records of fields (RFC 4180 quoting).
std::vector<std::vector<std::string>> split_csv(std::string_view text, std::string const& source) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, any = false;
  int line = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        if (c == '\n') ++line;
        field += c;
      }
      continue;
    }
    if (c == '"') {
      quoted = true;
      any = true;
    } else if (c == ',') {
      record.push_back(std::move(field));
      field.clear();
      any = true;
    } else if (c == '\n' || c == '\r') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      if (any || !field.empty()) {
        record.push_back(std::move(field));
        records.push_back(std::move(record));
      }
      field.clear();
      record.clear();
      any = false;
      ++line;
    } else {
      field += c;
      any = true;
    }
  }
  if (quoted) throw StudyError(std::format("{}:{}: a quoted field is not closed", source, line));
  if (any || !field.empty()) {
    record.push_back(std::move(field));
    records.push_back(std::move(record));
  }
  return records;
}

double to_double(std::string const& s, std::string const& column, std::string const& source, std::size_t line) {
  if (s.empty()) return 0;
  try {
    std::size_t used = 0;
    double v = std::stod(s, &used);
    if (used == s.size()) return v;
  } catch (std::exception const&) {
  }
  throw StudyError(std::format("{}:{}: column '{}' holds '{}', which is not a number", source, line, column, s));
}

}  // namespace

std::span<std::string const> csv_columns() { return columns; }

std::string to_csv(std::span<Row const> rows) {
  std::string out;
  for (std::size_t i = 0; i < columns.size(); ++i) out += (i ? "," : "") + quote(columns[i]);
  out += "\n";
  for (auto const& r : rows) {
    std::vector<std::string> fields = {
        r.problem, r.platform, r.application, number(r.fom), r.unit, number(r.arch_eff), number(r.app_eff),
        number(r.limit), r.limit_name, number(r.fom_min), number(r.fom_max), number(r.fom_stddev),
        number(r.median_s), std::to_string(r.repetitions), number(r.flops), number(r.bytes),
        number(r.bytes > 0 ? r.flops / r.bytes : 0), number(r.peak_GBps), number(r.peak_GFLOPps), number(r.peak_fma_GFLOPps), r.workload,
        r.size, std::to_string(r.devices), r.mesh, std::to_string(r.threads)};
    for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + quote(fields[i]);
    out += "\n";
  }
  return out;
}

std::vector<Row> parse_csv(std::string_view text, std::string const& source) {
  auto records = split_csv(text, source);
  if (records.empty()) throw StudyError(std::format("{}: empty: a study CSV needs at least its header line", source));
  auto const& header = records[0];
  std::map<std::string, std::size_t> column_index;
  for (std::size_t i = 0; i < header.size(); ++i) column_index[header[i]] = i;
  for (char const* required : {"problem", "platform", "application", "fom", "unit"})
    if (!column_index.contains(required))
      throw StudyError(std::format("{}:1: the header has no '{}' column (a study CSV starts with: problem, platform, "
                                   "application, fom, unit, ...)",
                                   source, required));
  std::vector<Row> rows;
  for (std::size_t n = 1; n < records.size(); ++n) {
    auto const& record = records[n];
    if (record.size() != header.size())
      throw StudyError(std::format("{}:{}: {} fields, but the header has {}", source, n + 1, record.size(), header.size()));
    auto text_of = [&](char const* c) { return column_index.contains(c) ? record[column_index[c]] : std::string(); };
    auto number_in = [&](char const* c) { return to_double(text_of(c), c, source, n + 1); };
    Row r;
    r.problem = text_of("problem");
    r.platform = text_of("platform");
    r.application = text_of("application");
    if (r.problem.empty() || r.platform.empty() || r.application.empty())
      throw StudyError(std::format("{}:{}: problem, platform and application must not be empty", source, n + 1));
    r.fom = number_in("fom");
    if (!(r.fom >= 0)) throw StudyError(std::format("{}:{}: fom {} is negative", source, n + 1, r.fom));
    r.unit = text_of("unit");
    r.arch_eff = number_in("arch eff");
    r.app_eff = number_in("app eff");
    r.limit = number_in("limit");
    r.limit_name = text_of("limit_name");
    r.fom_min = number_in("fom_min");
    r.fom_max = number_in("fom_max");
    r.fom_stddev = number_in("fom_stddev");
    r.median_s = number_in("median_s");
    r.repetitions = static_cast<int>(number_in("repetitions"));
    r.flops = number_in("flops");
    r.bytes = number_in("bytes");
    r.peak_GBps = number_in("peak_GBps");
    r.peak_GFLOPps = number_in("peak_GFLOPps");
    r.peak_fma_GFLOPps = number_in("peak_FMA_GFLOPps");
    r.workload = text_of("workload");
    r.size = text_of("size");
    r.devices = static_cast<int>(number_in("devices"));
    r.mesh = text_of("mesh");
    r.threads = static_cast<int>(number_in("threads"));
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<Row> read_csv(std::string const& path) { return parse_csv(read_file(path, "result file"), path); }

std::string to_csv(std::span<Portability const> pp) {
  std::string out = "problem,application,platforms,unsupported,pp (app eff),pp (arch eff)\n";
  auto join = [](std::vector<std::string> const& v) {
    std::string s;
    for (auto const& x : v) s += (s.empty() ? "" : "; ") + x;
    return s;
  };
  for (auto const& p : pp)
    out += std::format("{},{},{},{},{},{}\n", quote(p.problem), quote(p.application), quote(join(p.platforms)),
                       quote(join(p.unsupported)), number(p.pp_app), number(p.pp_arch));
  return out;
}

}  // namespace tessel::study
