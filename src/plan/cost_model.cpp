#include "tessel/plan/cost_model.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <format>
#include <fstream>
#include <mutex>
#include <sstream>
#include <vector>

#include "tessel/core/error.hpp"

namespace tessel::plan {
namespace {

// The file's entries, in the order they are written.
struct Entry {
  char const* name;
  double* latency;
  double* bandwidth;
};

std::vector<Entry> entries(CostModel& m) {
  return {{"transfer", &m.latency_us, &m.bandwidth_GBps},
          {"all_gather", &m.all_gather.latency_us, &m.all_gather.bandwidth_GBps},
          {"reduce_scatter", &m.reduce_scatter.latency_us, &m.reduce_scatter.bandwidth_GBps},
          {"all_reduce", &m.all_reduce.latency_us, &m.all_reduce.bandwidth_GBps},
          {"all_to_all", &m.all_to_all.latency_us, &m.all_to_all.bandwidth_GBps},
          {"collective_permute", &m.collective_permute.latency_us, &m.collective_permute.bandwidth_GBps},
          {"local_copy", &m.local_copy.latency_us, &m.local_copy.bandwidth_GBps},
          {"mpi_all_gather", &m.mpi_all_gather.latency_us, &m.mpi_all_gather.bandwidth_GBps},
          {"mpi_reduce_scatter", &m.mpi_reduce_scatter.latency_us, &m.mpi_reduce_scatter.bandwidth_GBps},
          {"mpi_all_reduce", &m.mpi_all_reduce.latency_us, &m.mpi_all_reduce.bandwidth_GBps},
          {"mpi_all_to_all", &m.mpi_all_to_all.latency_us, &m.mpi_all_to_all.bandwidth_GBps},
          {"mpi_collective_permute", &m.mpi_collective_permute.latency_us, &m.mpi_collective_permute.bandwidth_GBps}};
}

int& devices_per_process_storage() {
  static int n = 0;
  return n;
}

// "kernel launch_us bandwidth_GBps GFLOPps": the roofline's line, three values where the other
// entries have two.
Roofline read_roofline(std::vector<std::string> const& f, std::string const& where) {
  if (f.size() != 4)
    throw Error(std::format("{}: entry 'kernel' has {} values; expected 3 (launch_us bandwidth_GBps GFLOPps)", where,
                            f.size() - 1));
  char const* names[3] = {"launch_us", "bandwidth_GBps", "GFLOPps"};
  double values[3];
  for (std::size_t k = 0; k < 3; ++k) {
    char* end = nullptr;
    errno = 0;
    double v = std::strtod(f[k + 1].c_str(), &end);
    bool ok = end == f[k + 1].c_str() + f[k + 1].size() && errno == 0 && std::isfinite(v) && (k == 0 ? v >= 0 : v > 0);
    if (!ok)
      throw Error(std::format("{}: {} of 'kernel' is '{}'; expected a {} number", where, names[k], f[k + 1],
                              k == 0 ? "finite non-negative" : "finite positive"));
    values[k] = v;
  }
  return {values[0], values[1], values[2]};
}

std::mutex model_mutex;
bool model_loaded = false;

CostModel& model_storage() {
  static CostModel model;
  return model;
}

std::string& model_source() {
  static std::string source = "defaults";
  return source;
}

// The model as loaded (the defaults or the file's), to tell whether code has changed it since.
CostModel& loaded_model() {
  static CostModel model;
  return model;
}

void load_locked() {
  model_loaded = true;  // a malformed file is reported once; the defaults stay in force after
  auto path = cost_model_path();
  CostModel fresh;
  std::string source = "defaults";
  if (path && std::filesystem::exists(*path)) {
    fresh = read_cost_model(*path);
    source = "calibrated, from " + *path;
  }
  model_storage() = fresh;
  loaded_model() = fresh;
  model_source() = source;
}

}  // namespace

void set_devices_per_process(int devices) { devices_per_process_storage() = devices; }
int devices_per_process() { return devices_per_process_storage(); }

CostModel CostModel::over(Mesh const& mesh, ShardLayout::AxisList const& axes) const {
  int const per = devices_per_process();
  if (per <= 0) return *this;
  // Positions that differ only in their coordinates on `axes` form a group: a group's key is the
  // position with those coordinates zeroed. A group spans processes when its devices' differ.
  MeshAxes const& shape = mesh.axes();
  std::vector<int> first_process(static_cast<std::size_t>(mesh.num_devices()), -1);
  bool spans = false;
  for (int pos = 0; pos < mesh.num_devices() && !spans; ++pos) {
    auto c = shape.coords(pos);
    int key = 0;
    for (std::size_t a = 0; a < shape.num_axes(); ++a) {
      bool on = axes.empty() || std::find(axes.begin(), axes.end(), a) != axes.end();
      key = key * shape.size(a) + (on ? 0 : c[a]);
    }
    int process = mesh.device_id(pos) / per;
    int& seen = first_process[static_cast<std::size_t>(key)];
    if (seen < 0) seen = process;
    else spans = seen != process;
  }
  if (!spans) return *this;
  CostModel m = *this;
  m.all_gather = mpi_all_gather;
  m.reduce_scatter = mpi_reduce_scatter;
  m.all_reduce = mpi_all_reduce;
  m.all_to_all = mpi_all_to_all;
  m.collective_permute = mpi_collective_permute;
  return m;
}

std::string cost_model_source() {
  std::lock_guard lock(model_mutex);
  if (!model_loaded) load_locked();
  if (!(model_storage() == loaded_model())) return "set in code (over " + model_source() + ")";
  return model_source();
}

CostModel& cost_model() {
  std::lock_guard lock(model_mutex);
  if (!model_loaded) load_locked();
  return model_storage();
}

void reload_cost_model() {
  std::lock_guard lock(model_mutex);
  load_locked();
}

std::optional<std::string> cost_model_path() {
  if (char const* p = std::getenv("TESSEL_COST_MODEL")) {
    if (*p == '\0') return std::nullopt;
    return std::string(p);
  }
  if (char const* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/tessel/cost_model.txt";
  if (char const* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/tessel/cost_model.txt";
  return std::nullopt;
}

CostModel read_cost_model(std::string const& path) {
  std::ifstream in(path);
  if (!in) throw Error(std::format("cost model file '{}' cannot be read", path));
  CostModel m;
  auto table = entries(m);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    auto where = [&] { return std::format("cost model file '{}', line {}", path, number); };
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    if (f.empty()) continue;
    if (f[0] == "kernel") {
      m.kernel = read_roofline(f, where());
      continue;
    }
    auto e = std::find_if(table.begin(), table.end(), [&](Entry const& x) { return f[0] == x.name; });
    if (e == table.end())
      throw Error(std::format("{}: unknown entry '{}' (expected one of transfer, all_gather, reduce_scatter, "
                              "all_reduce, all_to_all, collective_permute, local_copy, mpi_all_gather, mpi_reduce_scatter, "
                              "mpi_all_reduce, mpi_all_to_all, mpi_collective_permute)",
                              where(), f[0]));
    if (f.size() != 3)
      throw Error(std::format("{}: entry '{}' has {} values; expected 2 (latency_us bandwidth_GBps)", where(), f[0],
                              f.size() - 1));
    double values[2];
    char const* field_names[2] = {"latency_us", "bandwidth_GBps"};
    for (int k = 0; k < 2; ++k) {
      std::string const& text = f[static_cast<std::size_t>(k) + 1];
      char* end = nullptr;
      errno = 0;
      double v = std::strtod(text.c_str(), &end);
      bool ok = end == text.c_str() + text.size() && errno == 0 && !std::isnan(v) &&
                (k == 0 ? v >= 0 && std::isfinite(v) : v > 0);
      if (!ok)
        throw Error(std::format("{}: {} of '{}' is '{}'; expected a {} number", where(), field_names[k], f[0], text,
                                k == 0 ? "finite non-negative" : "positive"));
      values[k] = v;
    }
    *e->latency = values[0];
    *e->bandwidth = values[1];
  }
  return m;
}

std::string to_string(CostModel const& model) {
  CostModel m = model;
  std::string s =
      "# tessel cost model (alpha-beta per collective), written by tessel_calibrate\n"
      "# name latency_us bandwidth_GBps\n";
  for (auto const& e : entries(m)) s += std::format("{} {:.6g} {:.6g}\n", e.name, *e.latency, *e.bandwidth);
  s += std::format("# kernel launch_us bandwidth_GBps GFLOPps (a roofline per device)\nkernel {:.6g} {:.6g} {:.6g}\n",
                   m.kernel.launch_us, m.kernel.bandwidth_GBps, m.kernel.GFLOPps);
  return s;
}

void write_cost_model(CostModel const& model, std::string const& path) {
  std::filesystem::path p(path);
  std::error_code ec;
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path(), ec);
  std::ofstream out(path);
  if (!out) throw Error(std::format("cost model file '{}' cannot be written", path));
  out << to_string(model);
  if (!out.flush()) throw Error(std::format("cost model file '{}' cannot be written", path));
}

std::size_t reshard_bytes(Shape const& shape, std::size_t element_bytes, NamedSharding const& from,
                          NamedSharding const& to) {
  if (from == to) return 0;
  Mesh const& src = from.mesh();
  Mesh const& dst = to.mesh();
  std::int64_t crossing = 0;
  for (int p = 0; p < dst.num_devices(); ++p) {
    Box want = to.layout().box(shape, p);
    std::int64_t local = 0;
    auto ids = src.device_ids();
    auto it = std::find(ids.begin(), ids.end(), dst.device_id(p));
    if (it != ids.end()) local = intersect(want, from.layout().box(shape, static_cast<int>(it - ids.begin()))).num_elements();
    crossing += want.num_elements() - local;
  }
  return static_cast<std::size_t>(crossing) * element_bytes;
}

}  // namespace tessel::plan
