// Study files: TOML, or JSON read as the TOML table it spells, checked whole before anything runs.
#include "study_file.hpp"

#include <algorithm>
#include <cctype>
#include <format>
#include <limits>
#include <nlohmann/json.hpp>
#include <toml++/toml.hpp>
#include <variant>

#include "text_files.hpp"
#include "workloads.hpp"

namespace tessel::study {

namespace {

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

// [study]: the name, platform, repetitions and minimum time per repetition.
void parse_settings(toml::table const& settings, Study& study, std::string const& source) {
  check_keys(settings, {"name", "platform", "repetitions", "min_time"}, "[study]", source);
  if (auto const* n = settings.get("name")) study.name = n->value_or(study.name);
  if (auto const* n = settings.get("platform")) study.platform = n->value_or(std::string());
  if (auto const* n = settings.get("repetitions")) {
    study.repetitions = static_cast<int>(integer(*n, "study.repetitions", source));
    if (study.repetitions < 1 || study.repetitions > 1000)
      throw StudyError(std::format("{}: study.repetitions is {}; it must be 1..1000", where(source, *n), study.repetitions));
  }
  if (auto const* n = settings.get("min_time")) {
    auto v = n->value<double>();
    if (!v || !(*v > 0 && *v <= 60))
      throw StudyError(std::format("{}: study.min_time must be a number of seconds in (0, 60]", where(source, *n)));
    study.min_time = *v;
  }
}

// [[configuration]] number `number` (from 1).
Configuration parse_configuration(toml::node const& node, int number, std::string const& source) {
  auto const* t = node.as_table();
  std::string what = std::format("configuration {}", number);
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
  return c;
}

// A workload's size with every parameter at its default.
Size default_size(Workload const& workload) {
  Size size;
  for (auto const& [parameter, value] : workload.defaults) size.dims.emplace_back(std::string(parameter), value);
  return size;
}

// [[workload]] number `number` (from 1): one run per size, each checked against every configuration.
std::vector<WorkloadRun> parse_workload(toml::node const& node, int number,
                                        std::vector<Configuration> const& configurations, std::string const& source) {
  auto const* t = node.as_table();
  if (!t) throw StudyError(std::format("{}: workload {} must be a table", where(source, node), number));
  check_keys(*t, {"name", "sizes"}, std::format("workload {}", number), source);
  auto name = (*t)["name"].value<std::string>();
  if (!name) throw StudyError(std::format("{}: workload {} has no name", where(source, *t), number));
  Workload const* workload = find_workload(*name);
  if (!workload)
    throw StudyError(std::format("{}: unknown workload '{}' (known: {})", where(source, *t), *name, workload_names()));
  std::vector<Size> sizes;
  if (auto const* n = t->get("sizes")) {
    auto const* a = n->as_array();
    if (!a) throw StudyError(std::format("{}: workload '{}': sizes must be a list of tables", where(source, *n), *name));
    for (auto const& e : *a) {
      auto const* given = e.as_table();
      if (!given)
        throw StudyError(std::format("{}: workload '{}': each size must be a table like {{{} = {}}}", where(source, e),
                                     *name, workload->defaults[0].first, workload->defaults[0].second));
      Size size = default_size(*workload);
      for (auto const& [key, v] : *given) {
        auto it = std::find_if(size.dims.begin(), size.dims.end(), [&](auto const& d) { return d.first == key.str(); });
        if (it == size.dims.end()) {
          std::string known;
          for (auto const& [p, d] : workload->defaults) known += (known.empty() ? "" : ", ") + std::string(p);
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
    sizes.push_back(default_size(*workload));
  }
  std::vector<WorkloadRun> runs;
  for (auto& size : sizes) {
    for (auto const& c : configurations) {
      if (auto why = workload->check(size, c))
        throw StudyError(std::format("{}: workload '{}' of size {} cannot run on {}: {}", where(source, *t), *name,
                                     size.label(), c.label(), *why));
    }
    runs.push_back({std::string(*name), std::move(size)});
  }
  return runs;
}

Study parse_study_table(toml::table const& root, std::string const& source) {
  check_keys(root, {"study", "configuration", "workload"}, "the study file", source);
  Study study;
  if (auto const* settings = root["study"].as_table()) parse_settings(*settings, study, source);

  auto const* configuration_tables = root["configuration"].as_array();
  if (root.contains("configuration") && !configuration_tables)
    throw StudyError(std::format("{}: 'configuration' must be an array of tables ([[configuration]])", source));
  if (configuration_tables) {
    int number = 0;
    for (auto const& node : *configuration_tables)
      study.configurations.push_back(parse_configuration(node, ++number, source));
  }
  if (study.configurations.empty()) study.configurations.push_back(Configuration{8, {8}, {"x"}, 0, {}, {}});

  auto const* workload_tables = root["workload"].as_array();
  if (!workload_tables || workload_tables->empty())
    throw StudyError(std::format("{}: the study names no workload (add [[workload]] tables with name = one of: {})",
                                 source, workload_names()));
  int number = 0;
  for (auto const& node : *workload_tables) {
    auto runs = parse_workload(node, ++number, study.configurations, source);
    study.runs.insert(study.runs.end(), runs.begin(), runs.end());
  }
  return study;
}

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

Study read_study(std::string const& path) {
  std::string text = read_file(path, "study file");
  return path.ends_with(".json") ? parse_study_json(text, path) : parse_study(text, path);
}

}  // namespace tessel::study
