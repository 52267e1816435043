// Study files, result rows (CSV, JSON) and the efficiency and portability metrics.
#include "study.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <format>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <toml++/toml.hpp>
#include <variant>

#include "study_workloads.hpp"

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

namespace {

std::string read_file(std::string const& path, char const* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StudyError(std::format("cannot read {} '{}'", what, path));
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Where a node is in the file, for messages: "study.toml:12".
std::string where(std::string const& source, toml::node const& n) {
  auto line = n.source().begin.line;
  return line ? std::format("{}:{}", source, line) : source;
}

void check_keys(toml::table const& t, std::initializer_list<std::string_view> allowed, std::string const& what,
                std::string const& source) {
  for (auto const& [k, v] : t) {
    if (std::find(allowed.begin(), allowed.end(), k.str()) == allowed.end()) {
      std::string names;
      for (auto a : allowed) names += (names.empty() ? "" : ", ") + std::string(a);
      throw StudyError(std::format("{}: {} has an unknown key '{}' (known: {})", where(source, v), what, k.str(), names));
    }
  }
}

std::int64_t integer(toml::node const& n, std::string const& what, std::string const& source) {
  auto v = n.value<std::int64_t>();
  if (!v || !n.is_integer()) throw StudyError(std::format("{}: {} must be an integer", where(source, n), what));
  return *v;
}

}  // namespace

namespace {

// A JSON study file is read as the TOML table it spells, so both forms pass the same checks. Its
// nodes carry no line numbers: messages name the file and the item ("configuration 2.mesh").
using Scalar = std::variant<std::int64_t, double, std::string, bool>;
toml::table table_of(nlohmann::json const& j, std::string const& path, std::string const& source);
toml::array array_of(nlohmann::json const& j, std::string const& path, std::string const& source);

Scalar scalar_of(nlohmann::json const& j, std::string const& path, std::string const& source) {
  switch (j.type()) {
    case nlohmann::json::value_t::number_integer: return j.get<std::int64_t>();
    case nlohmann::json::value_t::number_unsigned:
      if (j.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        throw StudyError(std::format("{}: {} is too large", source, path));
      return static_cast<std::int64_t>(j.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float: return j.get<double>();
    case nlohmann::json::value_t::string: return j.get<std::string>();
    case nlohmann::json::value_t::boolean: return j.get<bool>();
    default: throw StudyError(std::format("{}: {} is null; a study file has no null values", source, path));
  }
}

template <class Put>
void put(nlohmann::json const& j, std::string const& path, std::string const& source, Put const& put_node) {
  if (j.is_object()) put_node(table_of(j, path, source));
  else if (j.is_array()) put_node(array_of(j, path, source));
  else std::visit([&](auto&& v) { put_node(std::move(v)); }, scalar_of(j, path, source));
}

toml::table table_of(nlohmann::json const& j, std::string const& path, std::string const& source) {
  toml::table t;
  for (auto const& [k, v] : j.items())
    put(v, path.empty() ? k : path + "." + k, source, [&](auto&& node) { t.insert(k, std::move(node)); });
  return t;
}

toml::array array_of(nlohmann::json const& j, std::string const& path, std::string const& source) {
  toml::array a;
  for (std::size_t i = 0; i < j.size(); ++i)
    put(j[i], std::format("{}[{}]", path, i), source, [&](auto&& node) { a.push_back(std::move(node)); });
  return a;
}

Study parse_study_table(toml::table const& root, std::string const& source);

}  // namespace

Study parse_study(std::string_view text, std::string const& source) {
  toml::table root;
  try {
    root = toml::parse(text, source);
  } catch (toml::parse_error const& e) {
    throw StudyError(std::format("{}:{}: not a valid TOML study file: {}", source, e.source().begin.line,
                                 e.description()));
  }
  return parse_study_table(root, source);
}

Study parse_study_json(std::string_view text, std::string const& source) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (nlohmann::json::parse_error const& e) {
    throw StudyError(std::format("{}: not a valid JSON study file: {}", source, e.what()));
  }
  if (!j.is_object())
    throw StudyError(std::format("{}: a JSON study file is an object ({{\"study\": ..., \"workload\": [...]}})", source));
  return parse_study_table(table_of(j, "", source), source);
}

namespace {
Study parse_study_table(toml::table const& root, std::string const& source) {
  check_keys(root, {"study", "configuration", "workload"}, "the study file", source);
  Study s;
  if (auto const* st = root["study"].as_table()) {
    check_keys(*st, {"name", "platform", "repetitions", "min_time"}, "[study]", source);
    if (auto const* n = st->get("name")) s.name = n->value_or(s.name);
    if (auto const* n = st->get("platform")) s.platform = n->value_or(std::string());
    if (auto const* n = st->get("repetitions")) {
      s.repetitions = static_cast<int>(integer(*n, "study.repetitions", source));
      if (s.repetitions < 1 || s.repetitions > 1000)
        throw StudyError(std::format("{}: study.repetitions is {}; it must be 1..1000", where(source, *n), s.repetitions));
    }
    if (auto const* n = st->get("min_time")) {
      auto v = n->value<double>();
      if (!v || !(*v > 0 && *v <= 60))
        throw StudyError(std::format("{}: study.min_time must be a number of seconds in (0, 60]", where(source, *n)));
      s.min_time = *v;
    }
  }

  auto const* configs = root["configuration"].as_array();
  if (root.contains("configuration") && !configs)
    throw StudyError(std::format("{}: 'configuration' must be an array of tables ([[configuration]])", source));
  if (configs) {
    int k = 0;
    for (auto const& node : *configs) {
      ++k;
      auto const* t = node.as_table();
      std::string what = std::format("configuration {}", k);
      if (!t) throw StudyError(std::format("{}: {} must be a table", where(source, node), what));
      check_keys(*t, {"devices", "mesh", "axes", "threads", "wait_policy", "preset"}, what, source);
      Configuration c;
      if (auto const* n = t->get("devices")) c.devices = static_cast<int>(integer(*n, what + ".devices", source));
      if (c.devices < 1 || c.devices > 4096)
        throw StudyError(std::format("{}: {} has devices = {}; it must be 1..4096", where(source, *t), what, c.devices));
      if (auto const* n = t->get("mesh")) {
        auto const* a = n->as_array();
        if (!a || a->empty()) throw StudyError(std::format("{}: {}.mesh must be a list of axis sizes", where(source, *n), what));
        for (auto const& e : *a) {
          auto v = integer(e, what + ".mesh", source);
          if (v < 1) throw StudyError(std::format("{}: {}.mesh has an axis of size {}", where(source, *n), what, v));
          c.mesh.push_back(static_cast<int>(v));
        }
      } else {
        c.mesh = {c.devices};
      }
      std::int64_t product = 1;
      for (int m : c.mesh) product *= m;
      if (product != c.devices) {
        std::string m;
        for (int v : c.mesh) m += (m.empty() ? "" : ", ") + std::to_string(v);
        throw StudyError(std::format("{}: {} has mesh [{}] of {} devices, but devices = {}", where(source, *t), what,
                                     m, product, c.devices));
      }
      if (auto const* n = t->get("axes")) {
        auto const* a = n->as_array();
        if (!a) throw StudyError(std::format("{}: {}.axes must be a list of names", where(source, *n), what));
        for (auto const& e : *a) {
          auto v = e.value<std::string>();
          if (!v || v->empty()) throw StudyError(std::format("{}: {}.axes must be a list of names", where(source, *n), what));
          c.axes.push_back(*v);
        }
        if (c.axes.size() != c.mesh.size())
          throw StudyError(std::format("{}: {} names {} axes for a mesh of {}", where(source, *n), what, c.axes.size(),
                                       c.mesh.size()));
      } else {
        static constexpr char const* names[] = {"x", "y", "z", "w"};
        if (c.mesh.size() > 4) throw StudyError(std::format("{}: {} has more than 4 mesh axes", where(source, *t), what));
        for (std::size_t i = 0; i < c.mesh.size(); ++i) c.axes.emplace_back(names[i]);
      }
      if (auto const* n = t->get("threads")) {
        c.threads = static_cast<int>(integer(*n, what + ".threads", source));
        if (c.threads < 0 || c.threads > 4096)
          throw StudyError(std::format("{}: {} has threads = {}; it must be 0 (all) or a count", where(source, *n), what,
                                       c.threads));
      }
      if (auto const* n = t->get("wait_policy")) {
        auto v = n->value<std::string>();
        if (!v || (*v != "active" && *v != "passive"))
          throw StudyError(std::format("{}: {}.wait_policy must be \"active\" or \"passive\"", where(source, *n), what));
        c.wait_policy = *v;
      }
      if (auto const* n = t->get("preset")) {
        auto v = n->value<std::string>();
        bool plain = v && !v->empty() && std::all_of(v->begin(), v->end(), [](char ch) {
          return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_' || ch == '.';
        });
        if (!plain || *v == "." || *v == "..")
          throw StudyError(std::format("{}: {}.preset must be a CMake preset's name (letters, digits, '-', '_'), "
                                       "as in CMakePresets.json",
                                       where(source, *n), what));
        c.preset = *v;
      }
      s.configurations.push_back(std::move(c));
    }
  }
  if (s.configurations.empty()) s.configurations.push_back(Configuration{8, {8}, {"x"}, 0, {}, {}});

  auto const* list = root["workload"].as_array();
  if (!list || list->empty())
    throw StudyError(std::format("{}: the study names no workload (add [[workload]] tables with name = one of: {})",
                                 source, workload_names()));
  int k = 0;
  for (auto const& node : *list) {
    ++k;
    auto const* t = node.as_table();
    if (!t) throw StudyError(std::format("{}: workload {} must be a table", where(source, node), k));
    check_keys(*t, {"name", "sizes"}, std::format("workload {}", k), source);
    auto name = (*t)["name"].value<std::string>();
    if (!name) throw StudyError(std::format("{}: workload {} has no name", where(source, *t), k));
    Workload const* w = find_workload(*name);
    if (!w)
      throw StudyError(std::format("{}: unknown workload '{}' (known: {})", where(source, *t), *name, workload_names()));
    std::vector<Size> sizes;
    if (auto const* n = t->get("sizes")) {
      auto const* a = n->as_array();
      if (!a) throw StudyError(std::format("{}: workload '{}': sizes must be a list of tables", where(source, *n), *name));
      for (auto const& e : *a) {
        auto const* st = e.as_table();
        if (!st) throw StudyError(std::format("{}: workload '{}': each size must be a table like {{{} = {}}}",
                                              where(source, e), *name, w->defaults[0].first, w->defaults[0].second));
        Size size;
        for (auto const& [p, v] : w->defaults) size.dims.emplace_back(std::string(p), v);
        for (auto const& [key, v] : *st) {
          auto it = std::find_if(size.dims.begin(), size.dims.end(), [&](auto const& d) { return d.first == key.str(); });
          if (it == size.dims.end()) {
            std::string known;
            for (auto const& [p, d] : w->defaults) known += (known.empty() ? "" : ", ") + std::string(p);
            throw StudyError(std::format("{}: workload '{}' has no size parameter '{}' (its parameters: {})",
                                         where(source, v), *name, key.str(), known));
          }
          it->second = integer(v, std::format("workload '{}' size {}", *name, key.str()), source);
          if (it->second < 1)
            throw StudyError(std::format("{}: workload '{}': size {} = {} must be positive", where(source, v), *name,
                                         key.str(), it->second));
        }
        sizes.push_back(std::move(size));
      }
    } else {
      Size size;
      for (auto const& [p, v] : w->defaults) size.dims.emplace_back(std::string(p), v);
      sizes.push_back(std::move(size));
    }
    for (auto& size : sizes) {
      for (auto const& c : s.configurations) {
        if (auto why = w->check(size, c))
          throw StudyError(std::format("{}: workload '{}' of size {} cannot run on {}: {}", where(source, *t), *name,
                                       size.label(), c.label(), *why));
      }
      s.runs.push_back({std::string(*name), std::move(size)});
    }
  }
  return s;
}
}  // namespace

Study read_study(std::string const& path) {
  std::string text = read_file(path, "study file");
  return path.ends_with(".json") ? parse_study_json(text, path) : parse_study(text, path);
}

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
    std::vector<std::string> f = {
        r.problem, r.platform, r.application, number(r.fom), r.unit, number(r.arch_eff), number(r.app_eff),
        number(r.limit), r.limit_name, number(r.fom_min), number(r.fom_max), number(r.fom_stddev),
        number(r.median_s), std::to_string(r.repetitions), number(r.flops), number(r.bytes),
        number(r.bytes > 0 ? r.flops / r.bytes : 0), number(r.peak_GBps), number(r.peak_GFLOPps), number(r.peak_fma_GFLOPps), r.workload,
        r.size, std::to_string(r.devices), r.mesh, std::to_string(r.threads)};
    for (std::size_t i = 0; i < f.size(); ++i) out += (i ? "," : "") + quote(f[i]);
    out += "\n";
  }
  return out;
}

std::vector<Row> parse_csv(std::string_view text, std::string const& source) {
  auto records = split_csv(text, source);
  if (records.empty()) throw StudyError(std::format("{}: empty: a study CSV needs at least its header line", source));
  auto const& header = records[0];
  std::map<std::string, std::size_t> at;
  for (std::size_t i = 0; i < header.size(); ++i) at[header[i]] = i;
  for (char const* required : {"problem", "platform", "application", "fom", "unit"})
    if (!at.contains(required))
      throw StudyError(std::format("{}:1: the header has no '{}' column (a study CSV starts with: problem, platform, "
                                   "application, fom, unit, ...)",
                                   source, required));
  std::vector<Row> rows;
  for (std::size_t n = 1; n < records.size(); ++n) {
    auto const& rec = records[n];
    if (rec.size() != header.size())
      throw StudyError(std::format("{}:{}: {} fields, but the header has {}", source, n + 1, rec.size(), header.size()));
    auto text_of = [&](char const* c) { return at.contains(c) ? rec[at[c]] : std::string(); };
    auto num = [&](char const* c) { return to_double(text_of(c), c, source, n + 1); };
    Row r;
    r.problem = text_of("problem");
    r.platform = text_of("platform");
    r.application = text_of("application");
    if (r.problem.empty() || r.platform.empty() || r.application.empty())
      throw StudyError(std::format("{}:{}: problem, platform and application must not be empty", source, n + 1));
    r.fom = num("fom");
    if (!(r.fom >= 0)) throw StudyError(std::format("{}:{}: fom {} is negative", source, n + 1, r.fom));
    r.unit = text_of("unit");
    r.arch_eff = num("arch eff");
    r.app_eff = num("app eff");
    r.limit = num("limit");
    r.limit_name = text_of("limit_name");
    r.fom_min = num("fom_min");
    r.fom_max = num("fom_max");
    r.fom_stddev = num("fom_stddev");
    r.median_s = num("median_s");
    r.repetitions = static_cast<int>(num("repetitions"));
    r.flops = num("flops");
    r.bytes = num("bytes");
    r.peak_GBps = num("peak_GBps");
    r.peak_GFLOPps = num("peak_GFLOPps");
    r.peak_fma_GFLOPps = num("peak_FMA_GFLOPps");
    r.workload = text_of("workload");
    r.size = text_of("size");
    r.devices = static_cast<int>(num("devices"));
    r.mesh = text_of("mesh");
    r.threads = static_cast<int>(num("threads"));
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<Row> read_csv(std::string const& path) { return parse_csv(read_file(path, "result file"), path); }

void compute_efficiencies(std::vector<Row>& rows) {
  // The platform's limit for a (workload, unit): the largest any row of it carries (a second
  // application, e.g. JAX, measures none of its own).
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<double, std::string>> limit;
  std::map<std::string, std::tuple<double, double, double>> peaks;  // platform -> (GB/s, GEMM, FMA GFLOP/s)
  for (auto const& r : rows) {
    auto& l = limit[{r.platform, r.workload, r.unit}];
    if (r.limit > l.first) l = {r.limit, r.limit_name};
    auto& [bw, gemm, fma] = peaks[r.platform];
    bw = std::max(bw, r.peak_GBps);
    gemm = std::max(gemm, r.peak_GFLOPps);
    fma = std::max(fma, r.peak_fma_GFLOPps);
  }
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
    auto const& [bw, gemm, fma] = peaks[r.platform];
    if (!(r.peak_GBps > 0)) r.peak_GBps = bw;
    if (!(r.peak_GFLOPps > 0)) r.peak_GFLOPps = gemm;
    if (!(r.peak_fma_GFLOPps > 0)) r.peak_fma_GFLOPps = fma;
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
  std::map<std::string, std::set<std::string>> platforms;     // problem -> H
  std::map<std::pair<std::string, std::string>, bool> pairs;  // (problem, application)
  std::map<std::tuple<std::string, std::string, std::string>, std::pair<double, double>> eff;
  for (auto const& r : rows) {
    platforms[r.problem].insert(r.platform);
    pairs[{r.problem, r.application}] = true;
    if (!(r.fom > 0)) continue;  // a figure of 0 marks a run that could not happen there (as P3 reads it)
    auto& e = eff[{r.problem, r.application, r.platform}];
    e.first = std::max(e.first, r.app_eff);
    e.second = std::max(e.second, r.arch_eff);
  }
  std::vector<Portability> out;
  for (auto const& [key, unused] : pairs) {
    Portability p{key.first, key.second, {}, {}, 0, 0};
    std::vector<std::optional<double>> app, arch;
    for (auto const& platform : platforms[key.first]) {
      p.platforms.push_back(platform);
      auto it = eff.find({key.first, key.second, platform});
      if (it == eff.end()) {
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

std::vector<InstructionTime> median_instructions(std::vector<std::vector<InstructionTime>> const& profiles) {
  if (profiles.empty()) return {};
  std::vector<InstructionTime> out = profiles[0];
  for (std::size_t k = 0; k < out.size(); ++k) {
    std::vector<double> us;
    for (auto const& p : profiles)
      if (p.size() == out.size()) us.push_back(p[k].measured_us);
    std::sort(us.begin(), us.end());
    std::size_t n = us.size();
    out[k].measured_us = n % 2 ? us[n / 2] : 0.5 * (us[n / 2 - 1] + us[n / 2]);
  }
  return out;
}

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

}  // namespace tessel::study
