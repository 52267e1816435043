#pragma once
// Reference data written by the scripts under tests/data (from a CPU jax): whitespace-separated
// tokens, '#' lines are comments (they record the jax version that wrote the file).
#include <catch2/catch_test_macros.hpp>

#include <bit>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#ifndef TESSEL_TEST_DATA_DIR
#define TESSEL_TEST_DATA_DIR "tests/data"
#endif

namespace tessel::test {

class ReferenceTokens {
 public:
  // `folder/name` under the test data directory; fails the test when missing or empty.
  ReferenceTokens(std::string const& folder, std::string const& name) {
    const std::string path = std::string(TESSEL_TEST_DATA_DIR) + "/" + folder + "/" + name;
    std::ifstream in(path);
    if (!in) FAIL("cannot open reference file " << path);
    std::string line;
    while (std::getline(in, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream ls(line);
      std::string t;
      while (ls >> t) toks_.push_back(t);
    }
    INFO(path);
    REQUIRE(!toks_.empty());
  }
  [[nodiscard]] bool done() const { return pos_ >= toks_.size(); }
  // The next token, not taken ("" at the end).
  [[nodiscard]] std::string peek() const { return done() ? std::string() : toks_[pos_]; }
  std::string word() {
    REQUIRE(pos_ < toks_.size());
    return toks_[pos_++];
  }
  std::uint64_t hex() { return std::stoull(word(), nullptr, 16); }
  std::uint64_t dec() { return std::stoull(word(), nullptr, 10); }
  std::int64_t sdec() { return std::stoll(word(), nullptr, 10); }
  // The next n tokens as float32 bit patterns (8 hex digits each).
  std::vector<float> floats(std::size_t n) {
    std::vector<float> out(n);
    for (auto& v : out) v = std::bit_cast<float>(static_cast<std::uint32_t>(hex()));
    return out;
  }

 private:
  std::vector<std::string> toks_;
  std::size_t pos_ = 0;
};

}  // namespace tessel::test
