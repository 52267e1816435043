#pragma once
// The JAX reference vectors of tests/data/jax_semantics (make_vectors.py there says how they were
// made and what each block holds), and how the semantics tests run an op over them: inputs laid
// out as 1-D tensors, sharded over every axis of several meshes and on one device, the results
// read back.
#include <bit>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "support/reference_tokens.hpp"
#include "tessel/tessel.hpp"

namespace tessel::test {

// A block of a vectors file: its header words after the kind (op name, n, ...) and its rows of
// tokens.
struct Block {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

// How a block of each kind is laid out: the header words after the kind (the last one is the
// row count) and the tokens of one row.
inline std::pair<int, std::size_t> layout(std::string const& file, std::string const& kind,
                                          std::vector<std::string> const& header) {
  if (kind == "op") return {2, file == "int32_unary.txt" ? 2 : 3};
  if (kind == "unary" || kind == "cast") return {kind == "cast" ? 3 : 2, 2};
  if (kind == "binary") return {2, 3};
  if (kind == "select") return {1, 4};
  if (kind == "reduce" || kind == "reduce_index") return {3, header.empty() ? 0 : std::stoul(header[1]) + 1};
  FAIL("unknown block kind " << kind << " in " << file);
  return {0, 0};
}

// Every block of `file` whose first word is `kind`, keyed by its header words without the count,
// joined with ' ' ("add", "max 8", "float32 int32", "" for select).
inline std::map<std::string, Block> read_blocks(std::string const& file, std::string const& kind) {
  ReferenceTokens in("jax_semantics", file);
  std::map<std::string, Block> out;
  while (!in.done()) {
    std::string k = in.word();
    Block b;
    int header_words = layout(file, k, {}).first;
    for (int i = 0; i + 1 < header_words; ++i) b.header.push_back(in.word());
    std::size_t count = in.dec();
    std::size_t width = layout(file, k, b.header).second;
    for (std::size_t r = 0; r < count; ++r) {
      std::vector<std::string> row;
      for (std::size_t t = 0; t < width; ++t) row.push_back(in.word());
      b.rows.push_back(std::move(row));
    }
    if (k != kind) continue;
    std::string key;
    for (auto const& h : b.header) key += (key.empty() ? "" : " ") + h;
    out[key] = std::move(b);
  }
  return out;
}

inline float f32(std::string const& hex) { return std::bit_cast<float>(static_cast<std::uint32_t>(std::stoul(hex, nullptr, 16))); }
inline double f64(std::string const& hex) { return std::bit_cast<double>(static_cast<std::uint64_t>(std::stoull(hex, nullptr, 16))); }
inline std::int32_t i32(std::string const& dec) { return static_cast<std::int32_t>(std::stol(dec)); }

inline bool subnormal(float x) { return std::fpclassify(x) == FP_SUBNORMAL; }

// The meshes the semantics tests shard over: 1-D, 2-D, 3-D and 6 scrambled devices, plus one device.
inline std::vector<NamedSharding> flat_shardings() {
  std::vector<NamedSharding> out;
  for (Mesh const& m : {make_mesh({8}, {"x"}), make_mesh({2, 4}, {"a", "b"}), make_mesh({2, 2, 2}, {"a", "b", "c"}),
                        make_mesh({3, 2}, {"a", "b"}, {5, 0, 3, 1, 7, 2})}) {
    FixedVector<AxisName, max_mesh_axes> names;
    for (std::size_t a = 0; a < m.axes().num_axes(); ++a) names.push_back(m.axes().name(a));
    FixedVector<DimSpec, max_rank> dims;
    dims.push_back(DimSpec::of(names));
    out.emplace_back(m, PartitionSpec::from_dims(dims));
  }
  out.push_back(detail::single_device_sharding(3));
  return out;
}

// Pads `v` with `fill` to a multiple of 24 elements, so every flat sharding divides it.
template <class T>
std::vector<T> padded(std::vector<T> v, T fill) {
  while (v.size() % 24 != 0 || v.empty()) v.push_back(fill);
  return v;
}

}  // namespace tessel::test
