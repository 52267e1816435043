#pragma once
// The `tensor` blocks of the tests/data/jax_ops files (make_vectors.py there): "tensor <case>
// <role> <dtype> <shape> <count>" and then count values (several a row), float32 as 8 hex digits, float64 as 16,
// int32 in decimal. Other lines (op, variants, case blocks) are skipped.
#include <catch2/catch_test_macros.hpp>

#include <bit>
#include <cstdint>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "tessel/core/shape.hpp"

#ifndef TESSEL_TEST_DATA_DIR
#define TESSEL_TEST_DATA_DIR "tests/data"
#endif

namespace tessel::test {

struct JaxTensor {
  std::string dtype;
  Shape shape;
  std::vector<double> values;  // float32 and int32 values are exact as doubles
  template <class T>
  [[nodiscard]] std::vector<T> as() const {
    return std::vector<T>(values.begin(), values.end());
  }
};

// Keyed by "<case> <role>".
inline std::map<std::string, JaxTensor> read_jax_tensors(std::string const& file) {
  std::string const path = std::string(TESSEL_TEST_DATA_DIR) + "/jax_ops/" + file;
  std::ifstream in(path);
  if (!in) FAIL("cannot open reference file " << path);
  std::map<std::string, JaxTensor> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("tensor ", 0) != 0) continue;
    std::istringstream ls(line);
    std::string kind, name, role, shape;
    std::size_t count = 0;
    JaxTensor t;
    ls >> kind >> name >> role >> t.dtype >> shape >> count;
    std::string digits;
    for (char c : shape) {
      if (c >= '0' && c <= '9') digits += c;
      else if (!digits.empty()) {
        t.shape.push_back(std::stoll(digits));
        digits.clear();
      }
    }
    // The values follow in rows of several tokens.
    std::string row;
    std::istringstream rs;
    for (std::size_t k = 0; k < count; ++k) {
      std::string v;
      while (!(rs >> v)) {
        REQUIRE(std::getline(in, row));
        rs.clear();
        rs.str(row);
      }
      if (t.dtype == "float32") t.values.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(std::stoul(v, nullptr, 16))));
      else if (t.dtype == "float64") t.values.push_back(std::bit_cast<double>(std::stoull(v, nullptr, 16)));
      else t.values.push_back(static_cast<double>(std::stol(v)));
    }
    out[name + " " + role] = std::move(t);
  }
  INFO(path);
  REQUIRE(!out.empty());
  return out;
}

}  // namespace tessel::test
