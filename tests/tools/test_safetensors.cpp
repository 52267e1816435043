// The safetensors reader: files written here (a header built with nlohmann/json, as Hugging Face's
// writer lays it out) load into every test sharding with their values; every way a file can be
// corrupt or truncated, and every mismatch with the model, is an Error naming the tensor and the
// bytes; mutated headers never crash the parser.
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "tessel/tessel.hpp"
#include "tessel/tools/safetensors.hpp"

using namespace tessel;
using Catch::Matchers::ContainsSubstring;

namespace {

struct Blob {
  std::string name, dtype;
  std::vector<std::int64_t> shape;
  std::vector<std::byte> bytes;
};

template <class T>
Blob blob(std::string name, std::string dtype, std::vector<std::int64_t> shape, std::vector<T> const& values) {
  Blob b{std::move(name), std::move(dtype), std::move(shape), {}};
  b.bytes.resize(values.size() * sizeof(T));
  std::memcpy(b.bytes.data(), values.data(), b.bytes.size());
  return b;
}

// The header JSON of `blobs` laid out back to back, as safetensors' writer does.
std::string header_of(std::vector<Blob> const& blobs, bool metadata = true) {
  nlohmann::json h = nlohmann::json::object();
  std::uint64_t at = 0;
  for (auto const& b : blobs) {
    h[b.name] = {{"dtype", b.dtype}, {"shape", b.shape}, {"data_offsets", {at, at + b.bytes.size()}}};
    at += b.bytes.size();
  }
  if (metadata) h["__metadata__"] = {{"format", "pt"}};
  return h.dump();
}

std::filesystem::path temp_file(std::string const& stem) {
  return std::filesystem::temp_directory_path() / ("tessel_test_" + stem + "_" + std::to_string(::getpid()) + ".safetensors");
}

// Writes a file of `header` (padded with spaces to 8 bytes) and the blobs' bytes.
std::filesystem::path write_file(std::string const& stem, std::string header, std::vector<Blob> const& blobs,
                                 std::int64_t cut = 0) {
  while (header.size() % 8 != 0) header += ' ';
  std::string bytes(8, '\0');
  std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) bytes[static_cast<std::size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  bytes += header;
  for (auto const& b : blobs) bytes.append(reinterpret_cast<char const*>(b.bytes.data()), b.bytes.size());
  bytes.resize(bytes.size() - static_cast<std::size_t>(cut));
  auto path = temp_file(stem);
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  return path;
}

std::vector<Blob> sample_blobs() {
  std::vector<float> w(6 * 10);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i) * 0.25f - 3.0f;
  std::vector<std::uint16_t> h(7);
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = bfloat16(static_cast<float>(i) - 2.5f).bits;
  std::vector<std::int64_t> ids{5, -1, 1LL << 40};
  std::vector<std::uint8_t> mask{1, 0, 1, 1};
  return {blob("w", "F32", {6, 10}, w), blob("b", "BF16", {7}, h), blob("ids", "I64", {3}, ids),
          blob("mask", "BOOL", {4}, mask)};
}

std::string error_of(auto&& f) {
  try {
    f();
  } catch (Error const& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("safetensors: tensors load into every sharding with their values, dtypes and shapes", "[safetensors]") {
  auto blobs = sample_blobs();
  auto path = write_file("values", header_of(blobs), blobs);
  SafetensorsFile file(path);
  REQUIRE(file.entries().size() == 4);
  CHECK(file.metadata().at("format") == "pt");
  CHECK(file.entry("w").dtype == DType::float32);
  CHECK(file.entry("w").shape == Shape{6, 10});
  CHECK(file.entry("b").dtype == DType::bfloat16);
  std::vector<float> want(60);
  std::memcpy(want.data(), blobs[0].bytes.data(), 240);
  for (Mesh const& mesh : {make_mesh({8}, {"x"}), make_mesh({2, 4}, {"a", "b"}), make_mesh({2, 2, 2}, {"a", "b", "c"}),
                           make_mesh({3, 2}, {"a", "b"}, {5, 0, 3, 1, 7, 2})}) {
    for (PartitionSpec spec : {P(), P(mesh.axes().name(0)), P(None, mesh.axes().name(mesh.axes().num_axes() - 1))}) {
      INFO(to_string(mesh) << " " << to_string(spec));
      auto w = file.load<float>("w", NamedSharding(mesh, spec), Shape{6, 10});
      CHECK(w.sharding() == NamedSharding(mesh, spec));
      CHECK(w.to_host() == want);
    }
  }
  auto b = file.load<bfloat16>("b").to_host();
  for (std::size_t i = 0; i < b.size(); ++i) CHECK(static_cast<float>(b[i]) == static_cast<float>(i) - 2.5f);
  CHECK(file.load<std::int64_t>("ids").to_host() == std::vector<std::int64_t>{5, -1, 1LL << 40});
  CHECK(file.load<bool>("mask").to_host() == std::vector<bool>{true, false, true, true});
  std::filesystem::remove(path);
}

TEST_CASE("safetensors: an unaligned tensor loads (copied to aligned memory first)", "[safetensors]") {
  std::vector<Blob> blobs{blob("byte", "U8", {3}, std::vector<std::uint8_t>{7, 8, 9}),
                          blob("x", "F32", {2}, std::vector<float>{1.5f, -2.0f})};
  auto path = write_file("unaligned", header_of(blobs, false), blobs);
  SafetensorsFile file(path);
  CHECK(file.load<float>("x").to_host() == std::vector<float>{1.5f, -2.0f});
  CHECK(file.load<std::uint8_t>("byte").to_host() == std::vector<std::uint8_t>{7, 8, 9});
  std::filesystem::remove(path);
}

TEST_CASE("safetensors: mismatches with the model name the tensor, the file's and the asked-for", "[safetensors][errors]") {
  auto blobs = sample_blobs();
  auto path = write_file("mismatch", header_of(blobs), blobs);
  SafetensorsFile file(path);
  CHECK_THAT(error_of([&] { (void)file.load<bfloat16>("w"); }),
             ContainsSubstring("tensor 'w' is float32 (F32), but bfloat16 was asked for"));
  CHECK_THAT(error_of([&] { (void)file.load<float>("w", Shape{10, 6}); }),
             ContainsSubstring("tensor 'w' has shape (6, 10), but the model expects (10, 6)"));
  CHECK_THAT(error_of([&] { (void)file.load<float>("transformer.wte.weight"); }),
             ContainsSubstring("no tensor 'transformer.wte.weight' (the file has 4: 'w', 'b', 'ids', 'mask')"));
  std::filesystem::remove(path);
}

TEST_CASE("safetensors: corrupt and truncated files are errors naming the tensor and the bytes", "[safetensors][errors]") {
  auto blobs = sample_blobs();
  auto check = [&](std::string const& stem, std::string const& header, std::string const& message, std::int64_t cut = 0) {
    auto path = write_file(stem, header, blobs, cut);
    INFO(stem);
    CHECK_THAT(error_of([&] { SafetensorsFile f(path); }), ContainsSubstring(message));
    std::filesystem::remove(path);
  };
  CHECK_THAT(error_of([] { SafetensorsFile f("/nonexistent-tessel/model.safetensors"); }),
             ContainsSubstring("safetensors: /nonexistent-tessel/model.safetensors: cannot open: No such file"));
  {
    auto path = temp_file("short");
    std::ofstream(path, std::ios::binary).write("abc", 3);
    CHECK_THAT(error_of([&] { SafetensorsFile f(path); }), ContainsSubstring("the file has 3 bytes, fewer than the 8"));
    std::filesystem::remove(path);
  }
  std::string good = header_of(blobs);
  check("truncated", good, "tensor 'mask': bytes [278, 282) run past the end of the data (281 bytes: the file is truncated?)",
        1);
  check("header_cut", good, "only", static_cast<std::int64_t>(282 + good.size() / 2));
  check("not_json", "{\"w\": {\"dtype\": \"F32\", ", "the header is not JSON");
  check("not_object", "[1, 2, 3]", "the header is array, not a JSON object");
  // A number past double's range is nlohmann's out_of_range, not a parse error (fuzz_safetensors).
  check("number_range", "{\"w\": {\"dtype\": \"F32\", \"shape\": [3e97108]}}",
        "the header is not JSON: [json.exception.out_of_range.406] number overflow");
  auto edited = [&](auto edit) {
    auto h = nlohmann::json::parse(good);
    edit(h);
    return h.dump();
  };
  check("dtype", edited([](auto& h) { h["w"]["dtype"] = "F8_E4M3"; }),
        "tensor 'w': dtype 'F8_E4M3' is not one tessel stores (F64, F32, BF16, F16, I64, I32, I8, U8, BOOL)");
  check("no_shape", edited([](auto& h) { h["b"].erase("shape"); }), "tensor 'b': its entry has no \"shape\"");
  check("negative", edited([](auto& h) { h["b"]["shape"] = {-7}; }),
        "tensor 'b': a dimension of \"shape\" is -7, not a non-negative integer");
  check("size", edited([](auto& h) { h["w"]["shape"] = {6, 11}; }),
        "tensor 'w': float32 (6, 11) needs 264 bytes, but data_offsets [0, 240) hold 240");
  check("huge", edited([](auto& h) { h["w"]["shape"] = {1ULL << 40, 1ULL << 40}; }), "has more than 2^60 bytes");
  check("offsets", edited([](auto& h) { h["w"]["data_offsets"] = {240, 0}; }), "data_offsets [240, 0) begin after they end");
  check("offsets_type", edited([](auto& h) { h["w"]["data_offsets"] = "0-240"; }),
        "\"data_offsets\" is \"0-240\", not [begin, end]");
  check("overlap", edited([](auto& h) { h["b"]["data_offsets"] = {230, 244}; }),
        "tensors 'w' [0, 240) and 'b' [230, 244) overlap");
  check("rank", edited([](auto& h) { h["b"]["shape"] = {1, 1, 1, 1, 1, 1, 1, 1, 7}; }),
        "shape has 9 dimensions; tessel's tensors have at most 8");
  check("metadata", edited([](auto& h) { h["__metadata__"] = {{"format", 3}}; }), "__metadata__ 'format' is number");
}

TEST_CASE("safetensors: mutated headers are parsed or refused, never a crash", "[safetensors][fuzz]") {
  auto blobs = sample_blobs();
  std::string const good = header_of(blobs);
  std::mt19937 rng(7);
  std::string const alphabet = "{}[]\",:0123456789-eE.tfnaulrs \\F32BOI";
  int refused = 0, parsed = 0;
  for (int round = 0; round < 4000; ++round) {
    std::string h = good;
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) {
      std::size_t at = rng() % h.size();
      switch (rng() % 4) {
        case 0: h[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: h.erase(at, 1 + rng() % 8); break;
        case 2: h.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        default: h.resize(at); break;
      }
      if (h.empty()) h = "{";
    }
    try {
      auto parsed_header = parse_safetensors_header(h, 282, "fuzz");
      for (auto const& e : parsed_header.entries) REQUIRE(e.end <= 282);
      ++parsed;
    } catch (Error const&) {
      ++refused;
    }
  }
  CHECK(refused > 0);
  CHECK(parsed + refused == 4000);
}
