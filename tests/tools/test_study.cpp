// The study tool's parts that need no timing: the study file's checks (each error names the
// offending item), the CSV schema, the efficiencies, Pennycook's PP metric against hand-computed
// values and the merge of two platforms' results (tests/tools/data/study_{a,b}.csv).
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <format>
#include <fstream>
#include <set>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "instruction_times.hpp"
#include "portability.hpp"
#include "results_csv.hpp"
#include "results_json.hpp"
#include "study_file.hpp"
#include "workloads.hpp"

using namespace tessel::study;
using Catch::Approx;
using Catch::Matchers::ContainsSubstring;

namespace {

std::string error_of(std::string const& toml) {
  try {
    parse_study(toml, "s.toml");
  } catch (StudyError const& e) {
    return e.what();
  }
  return "(no error)";
}

std::string data(char const* name) {
  return std::string(TESSEL_STUDY_DATA_DIR) + "/" + name;
}

Row const& find(std::vector<Row> const& rows, std::string const& problem, std::string const& platform,
                std::string const& app) {
  for (auto const& r : rows)
    if (r.problem == problem && r.platform == platform && r.application == app) return r;
  FAIL("no row " << problem << " / " << platform << " / " << app);
  return rows.front();
}

Portability const& find(std::vector<Portability> const& pp, std::string const& problem, std::string const& app) {
  for (auto const& p : pp)
    if (p.problem == problem && p.application == app) return p;
  FAIL("no PP for " << problem << " / " << app);
  return pp.front();
}

}  // namespace

TEST_CASE("study: a study file gives its runs and configurations", "[study]") {
  auto s = parse_study(R"(
[study]
name = "t"
repetitions = 3
min_time = 0.01
[[configuration]]
devices = 8
mesh = [4, 2]
axes = ["dp", "mp"]
threads = 1
[[configuration]]
devices = 4
wait_policy = "passive"
preset = "cuda"
[[workload]]
name = "softmax"
sizes = [{rows = 512}, {rows = 1024, cols = 256}]
[[workload]]
name = "all_reduce"
)",
                       "s.toml");
  CHECK(s.name == "t");
  CHECK(s.repetitions == 3);
  REQUIRE(s.configurations.size() == 2);
  CHECK(s.configurations[0].label() == "tessel d8 m4x2 t1");
  CHECK(s.configurations[1].label() == "tessel d4 m4 t0 passive");
  CHECK(s.configurations[1].axes == std::vector<std::string>{"x"});
  CHECK(s.configurations[0].preset.empty());
  CHECK(s.configurations[1].preset == "cuda");  // the label is the application's: a preset is a platform
  REQUIRE(s.runs.size() == 3);
  CHECK(s.runs[0].size.label() == "512x1024");  // cols keeps its default
  CHECK(s.runs[1].size.label() == "1024x256");
  CHECK(s.runs[2].workload == "all_reduce");
  CHECK(s.runs[2].size.label() == "8MiB");
}

TEST_CASE("study: every error in a study file names the offending item", "[study]") {
  CHECK_THAT(error_of("[[workload]]\nname = \"softmaxx\"\n"),
             ContainsSubstring("s.toml:1: unknown workload 'softmaxx' (known: fused_chain, softmax,"));
  CHECK_THAT(error_of("[[configuration]]\ndevices = 4\nmesh = [4, 2]\n[[workload]]\nname = \"softmax\"\n"),
             ContainsSubstring("configuration 1 has mesh [4, 2] of 8 devices, but devices = 4"));
  CHECK_THAT(error_of("[[workload]]\nname = \"softmax\"\nsizes = [{rowz = 8}]\n"),
             ContainsSubstring("workload 'softmax' has no size parameter 'rowz' (its parameters: rows, cols)"));
  CHECK_THAT(error_of("[[workload]]\nname = \"softmax\"\nsizes = [{rows = 12}]\n"),
             ContainsSubstring("workload 'softmax' of size 12x1024 cannot run on tessel d8 m8 t0: rows = 12 is not "
                               "divisible by the 8 devices"));
  CHECK_THAT(error_of("[[configuration]]\ndevices = 8\nmesh = [2, 2, 2]\n[[workload]]\nname = \"megatron_mlp\"\n"),
             ContainsSubstring("cannot run on tessel d8 m2x2x2 t0: it needs a mesh of 1 or 2 axes"));
  CHECK_THAT(error_of("[[configuration]]\ndevices = 1\n[[workload]]\nname = \"all_gather\"\n"),
             ContainsSubstring("a collective needs at least 2 devices"));
  CHECK_THAT(error_of("[study]\nrepetitons = 3\n[[workload]]\nname = \"softmax\"\n"),
             ContainsSubstring("s.toml:2: [study] has an unknown key 'repetitons'"));
  CHECK_THAT(error_of("[[configuration]]\ndevices = \"8\"\n[[workload]]\nname = \"softmax\"\n"),
             ContainsSubstring("configuration 1.devices must be an integer"));
  CHECK_THAT(error_of("[[configuration]]\nwait_policy = \"spin\"\n[[workload]]\nname = \"softmax\"\n"),
             ContainsSubstring("s.toml:2: configuration 1.wait_policy must be \"active\" or \"passive\""));
  CHECK_THAT(error_of("[[configuration]]\npreset = \"../cuda\"\n[[workload]]\nname = \"softmax\"\n"),
             ContainsSubstring("s.toml:2: configuration 1.preset must be a CMake preset's name"));
  CHECK_THAT(error_of("[study]\nname = \"x\"\n"), ContainsSubstring("s.toml: the study names no workload"));
  CHECK_THAT(error_of("[[workload]\nname = 1\n"), ContainsSubstring("s.toml:1: not a valid TOML study file"));
  try {
    read_study("/nonexistent/study.toml");
    FAIL("no error");
  } catch (StudyError const& e) {
    CHECK(std::string(e.what()) == "cannot read study file '/nonexistent/study.toml'");
  }
}

TEST_CASE("study: the CSV schema starts with the P3 columns and reads back", "[study]") {
  auto cols = csv_columns();
  REQUIRE(cols.size() >= 7);
  CHECK(std::vector<std::string>(cols.begin(), cols.begin() + 7) ==
        std::vector<std::string>{"problem", "platform", "application", "fom", "unit", "arch eff", "app eff"});
  Row r;
  r.problem = "softmax 2048x1024";
  r.platform = "Xeon, \"quoted\" / OpenMP";  // a comma and quotes survive the round trip
  r.application = "tessel d8 m8 t2";
  r.fom = 12.5;
  r.unit = "GB/s";
  r.limit = 25;
  r.limit_name = "stream_triad";
  r.flops = 5;
  r.bytes = 10;
  r.repetitions = 5;
  r.mesh = "4x2";
  std::vector<Row> rows{r};
  compute_efficiencies(rows);
  std::string csv = to_csv(rows);
  std::string header = csv.substr(0, csv.find('\n'));
  CHECK(header ==
        "problem,platform,application,fom,unit,arch eff,app eff,limit,limit_name,fom_min,fom_max,fom_stddev,median_s,"
        "repetitions,flops,bytes,intensity,peak_GBps,peak_GFLOPps,peak_FMA_GFLOPps,workload,size,devices,mesh,threads");
  auto back = parse_csv(csv, "r.csv");
  REQUIRE(back.size() == 1);
  CHECK(back[0].platform == r.platform);
  CHECK(back[0].fom == 12.5);
  CHECK(back[0].arch_eff == Approx(0.5));
  CHECK(back[0].app_eff == Approx(1.0));
  CHECK(back[0].mesh == "4x2");
  CHECK_THAT(csv, ContainsSubstring(",0.5,"));  // intensity = flops / bytes

  auto bad = [](std::string const& text) {
    try {
      parse_csv(text, "r.csv");
    } catch (StudyError const& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK_THAT(bad("problem,platform,fom,unit\n"), ContainsSubstring("r.csv:1: the header has no 'application' column"));
  CHECK_THAT(bad("problem,platform,application,fom,unit\np,q,a,fast,GB/s\n"),
             ContainsSubstring("r.csv:2: column 'fom' holds 'fast', which is not a number"));
  CHECK_THAT(bad("problem,platform,application,fom,unit\np,q,a,1\n"),
             ContainsSubstring("r.csv:2: 4 fields, but the header has 5"));
}

TEST_CASE("study: PP is the harmonic mean of efficiencies, 0 if a platform is unsupported", "[study]") {
  std::vector<std::optional<double>> three{0.5, 0.25, 1.0};
  CHECK(performance_portability(three) == Approx(3.0 / (2.0 + 4.0 + 1.0)));  // 3/7
  std::vector<std::optional<double>> one{0.8};
  CHECK(performance_portability(one) == Approx(0.8));
  std::vector<std::optional<double>> equal{0.6, 0.6};
  CHECK(performance_portability(equal) == Approx(0.6));
  std::vector<std::optional<double>> unsupported{0.9, std::nullopt};
  CHECK(performance_portability(unsupported) == 0.0);
  std::vector<std::optional<double>> zero{0.9, 0.0};
  CHECK(performance_portability(zero) == 0.0);
  CHECK(performance_portability({}) == 0.0);
}

TEST_CASE("study: merging two platforms' results gives hand-computed efficiencies and PP", "[study]") {
  auto rows = read_csv(data("study_a.csv"));
  auto b = read_csv(data("study_b.csv"));
  REQUIRE(rows.size() == 5);
  REQUIRE(b.size() == 3);
  CHECK(b[0].platform == "gpu-b, CUDA");
  rows.insert(rows.end(), b.begin(), b.end());
  compute_efficiencies(rows);
  std::string const a_ = "cpu-a / OpenMP", b_ = "gpu-b, CUDA", sm = "softmax 2048x1024",
                    mlp = "megatron_mlp 1024x512x2048", t8 = "tessel d8 m8 t2", t42 = "tessel d8 m4x2 t2";
  // softmax on A: tessel 10 GB/s, JAX 5 GB/s, triad 20 GB/s (JAX's row takes tessel's limit).
  CHECK(find(rows, sm, a_, t8).arch_eff == Approx(0.5));
  CHECK(find(rows, sm, a_, t8).app_eff == Approx(1.0));
  CHECK(find(rows, sm, a_, "jax d8").app_eff == Approx(0.5));
  CHECK(find(rows, sm, a_, "jax d8").limit == 20);
  CHECK(find(rows, sm, a_, "jax d8").arch_eff == Approx(0.25));
  CHECK(find(rows, sm, b_, t8).arch_eff == Approx(0.2));
  CHECK(find(rows, mlp, b_, t42).app_eff == Approx(0.5));

  auto pp = portability(rows);
  // softmax: tessel app eff 1 and 1 -> 1; arch eff 0.5 and 0.2 -> 2 / (2 + 5).
  CHECK(find(pp, sm, t8).pp_app == Approx(1.0));
  CHECK(find(pp, sm, t8).pp_arch == Approx(2.0 / 7.0));
  // JAX ran softmax on A only: unsupported on B, so PP 0.
  CHECK(find(pp, sm, "jax d8").pp_app == 0.0);
  CHECK(find(pp, sm, "jax d8").unsupported == std::vector<std::string>{b_});
  // The MLP: m4x2 reaches half of m8 on both platforms; arch eff 0.25 on both.
  CHECK(find(pp, mlp, t42).pp_app == Approx(0.5));
  CHECK(find(pp, mlp, t42).pp_arch == Approx(0.25));
  CHECK(find(pp, mlp, t8).pp_arch == Approx(0.5));
  // all_reduce ran on A only, so H = {A}: PP is its efficiency there.
  CHECK(find(pp, "all_reduce 8", t8).platforms == std::vector<std::string>{a_});
  CHECK(find(pp, "all_reduce 8", t8).pp_arch == Approx(0.5));
  std::string pp_csv = to_csv(pp);
  CHECK_THAT(pp_csv, ContainsSubstring("problem,application,platforms,unsupported,pp (app eff),pp (arch eff)\n"));
  CHECK_THAT(pp_csv, ContainsSubstring("softmax 2048x1024,jax d8,\"cpu-a / OpenMP; gpu-b, CUDA\",\"gpu-b, CUDA\",0,0\n"));
}

TEST_CASE("study: the registry names the issue's workloads", "[study]") {
  for (char const* name : {"fused_chain", "softmax", "layer_norm_gelu", "rms_norm", "megatron_mlp", "attention",
                           "transformer", "all_reduce", "all_gather", "reduce_scatter", "all_to_all",
                           "fused_chain_bf16", "softmax_bf16", "layer_norm_gelu_bf16"})
    CHECK(find_workload(name) != nullptr);
}

TEST_CASE("study: attention and the transformer layer check their sizes against the mesh", "[study]") {
  auto s = parse_study(R"(
[[configuration]]
devices = 8
mesh = [2, 4]
[[workload]]
name = "attention"
[[workload]]
name = "transformer"
sizes = [{batch = 2, seq = 64, model = 128, heads = 4, hidden = 256}]
)",
                       "s.toml");
  REQUIRE(s.runs.size() == 2);
  CHECK(s.runs[0].size.label() == "8x256x8x64");  // batch, seq, heads, head_dim
  CHECK(s.runs[1].size.label() == "2x64x128x4x256");
  std::string const mesh24 = "[[configuration]]\ndevices = 8\nmesh = [2, 4]\n";
  CHECK_THAT(error_of(mesh24 + "[[workload]]\nname = \"attention\"\nsizes = [{heads = 6}]\n"),
             ContainsSubstring("workload 'attention' of size 8x256x6x64 cannot run on tessel d8 m2x4 t0: heads = 6 is "
                               "not divisible by the mesh's second axis (4)"));
  CHECK_THAT(error_of(mesh24 + "[[workload]]\nname = \"attention\"\nsizes = [{batch = 3}]\n"),
             ContainsSubstring("batch = 3 is not divisible by the mesh's first axis (2)"));
  CHECK_THAT(error_of(mesh24 + "[[workload]]\nname = \"transformer\"\nsizes = [{model = 100}]\n"),
             ContainsSubstring("model = 100 is not divisible by heads = 8 (head_dim = model / heads)"));
  CHECK_THAT(error_of(mesh24 + "[[workload]]\nname = \"transformer\"\nsizes = [{hidden = 6}]\n"),
             ContainsSubstring("hidden = 6 is not divisible by the mesh's second axis (4)"));
  CHECK_THAT(error_of("[[configuration]]\ndevices = 8\nmesh = [2, 2, 2]\n[[workload]]\nname = \"transformer\"\n"),
             ContainsSubstring("it needs a mesh of 1 or 2 axes (dp, mp), not 3"));
}

namespace {
std::string json_error_of(std::string const& json) {
  try {
    parse_study_json(json, "s.json");
  } catch (StudyError const& e) {
    return e.what();
  }
  return "(no error)";
}
}  // namespace

TEST_CASE("study: a JSON study file reads as the same TOML tables", "[study]") {
  auto s = parse_study_json(R"({"study": {"name": "j", "repetitions": 3, "min_time": 0.01},
    "configuration": [{"devices": 8, "mesh": [4, 2], "axes": ["dp", "mp"], "threads": 1},
                      {"devices": 4, "wait_policy": "passive"}],
    "workload": [{"name": "softmax", "sizes": [{"rows": 512}, {"rows": 1024, "cols": 256}]},
                 {"name": "all_reduce"}]})",
                            "s.json");
  CHECK(s.name == "j");
  CHECK(s.repetitions == 3);
  CHECK(s.min_time == Approx(0.01));
  REQUIRE(s.configurations.size() == 2);
  CHECK(s.configurations[0].label() == "tessel d8 m4x2 t1");
  CHECK(s.configurations[1].label() == "tessel d4 m4 t0 passive");
  REQUIRE(s.runs.size() == 3);
  CHECK(s.runs[0].size.label() == "512x1024");
  CHECK(s.runs[1].size.label() == "1024x256");
  CHECK(s.runs[2].size.label() == "8MiB");

  CHECK_THAT(json_error_of(R"({"workload": [{"name": "softmaxx"}]})"),
             ContainsSubstring("s.json: unknown workload 'softmaxx' (known: fused_chain,"));
  CHECK_THAT(json_error_of(R"({"configuration": [{"devices": "8"}], "workload": [{"name": "softmax"}]})"),
             ContainsSubstring("s.json: configuration 1.devices must be an integer"));
  CHECK_THAT(json_error_of(R"({"study": {"repetitons": 3}, "workload": [{"name": "softmax"}]})"),
             ContainsSubstring("s.json: [study] has an unknown key 'repetitons'"));
  CHECK_THAT(json_error_of(R"({"workload": [{"name": "softmax", "sizes": [{"rows": null}]}]})"),
             ContainsSubstring("s.json: workload[0].sizes[0].rows is null; a study file has no null values"));
  CHECK_THAT(json_error_of(R"({"workload": [{"name": "softmax", "sizes": [{"rows": 1.5}]}]})"),
             ContainsSubstring("workload 'softmax' size rows must be an integer"));
  CHECK_THAT(json_error_of(R"([1, 2])"), ContainsSubstring("s.json: a JSON study file is an object"));
  CHECK_THAT(json_error_of(R"({"workload": [)"), ContainsSubstring("s.json: not a valid JSON study file"));
  CHECK_THAT(json_error_of(R"({"study": {"name": "x"}})"), ContainsSubstring("s.json: the study names no workload"));
}

TEST_CASE("study: per-instruction times are medians over the profiles and travel with the rows", "[study]") {
  auto at = [](double us) { return InstructionTime{0, 1, "tessel::gemm[dot]", "gemm", us, 2.0, 10, 20}; };
  auto med = median_instructions({{at(5), at(1)}, {at(3), at(9)}, {at(4), at(2)}});
  REQUIRE(med.size() == 2);
  CHECK(med[0].measured_us == 4);
  CHECK(med[1].measured_us == 2);
  CHECK(med[0].label == "tessel::gemm[dot]");
  CHECK(median_instructions({{at(1)}, {at(3)}})[0].measured_us == 2);
  CHECK(median_instructions({}).empty());

  std::vector<Row> rows(2);
  rows[0].problem = "p";
  rows[0].platform = "q";
  rows[0].application = "a";
  rows[0].unit = "GB/s";
  rows[1] = rows[0];
  rows[0].instructions = {at(7), InstructionTime{1, 0, "tessel::fused[add]", "fused", 3, 1.5, 4, 8}};
  std::string json = instructions_to_json(rows);
  std::vector<Row> back = rows;
  for (auto& r : back) r.instructions.clear();
  attach_instructions(back, json, "i.json");
  REQUIRE(back[0].instructions.size() == 2);
  CHECK(back[1].instructions.empty());
  CHECK(back[0].instructions[1].call == 1);
  CHECK(back[0].instructions[1].kind == "fused");
  CHECK(back[0].instructions[1].estimate_us == 1.5);
  CHECK(back[0].instructions[0].measured_us == 7);
  CHECK_THAT(to_json("s", rows, {}), ContainsSubstring("\"instructions\": ["));
  CHECK_THAT(to_json("s", rows, {}), ContainsSubstring("\"label\": \"tessel::fused[add]\""));

  std::vector<Row> one(1);
  auto error = [&](std::string const& text) {
    try {
      attach_instructions(one, text, "i.json");
    } catch (StudyError const& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(error(json) == "i.json: 2 instruction lists for 1 result rows");
  CHECK_THAT(error("[[{\"call\": 0}]]"), ContainsSubstring("i.json: not a list of instruction lists:"));
}

TEST_CASE("study: a figure of merit of 0 (a preset that cannot run here) counts as unsupported", "[study]") {
  std::vector<Row> rows(2);
  rows[0].problem = "softmax 256x256";
  rows[0].platform = "cpu / OpenMP";
  rows[0].application = "tessel d8 m8 t2";
  rows[0].unit = "GB/s";
  rows[0].fom = 10;
  rows[1] = rows[0];
  rows[1].platform = "[cuda] unsupported";
  rows[1].fom = 0;
  compute_efficiencies(rows);
  auto pp = portability(rows);
  REQUIRE(pp.size() == 1);
  CHECK(pp[0].platforms == std::vector<std::string>{"[cuda] unsupported", "cpu / OpenMP"});
  CHECK(pp[0].unsupported == std::vector<std::string>{"[cuda] unsupported"});
  CHECK(pp[0].pp_app == 0);
  CHECK(pp[0].pp_arch == 0);
}

TEST_CASE("study: every workload's default size runs on the default configuration, and default.toml checks",
          "[study]") {
  std::string all;
  for (auto const& w : workloads()) all += std::format("[[workload]]\nname = \"{}\"\n", w.name);
  CHECK(parse_study(all, "all.toml").runs.size() == workloads().size());  // on 8 devices, mesh [8]
  auto s = read_study(data("../../../examples/studies/default.toml"));
  CHECK(s.name == "default");
  std::set<std::string> named;
  for (auto const& run : s.runs) named.insert(run.workload);
  CHECK(named.size() == workloads().size());  // "every built-in workload", as the README says
}
