// libFuzzer: a safetensors header (tools/safetensors.hpp) is parsed or refused with a
// tessel::Error, never a crash, a hang or another exception; what it accepts stays inside the
// data section. The input's first 8 bytes choose the data section's size, the rest is the JSON.
//   ./tessel run build/fuzz/tests/fuzz/fuzz_safetensors -max_total_time=60 CORPUS
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "tessel/core/error.hpp"
#include "tessel/tools/safetensors.hpp"

extern "C" int LLVMFuzzerTestOneInput(std::uint8_t const* data, std::size_t size) {
  if (size < 8) return 0;
  std::uint64_t data_bytes = 0;
  std::memcpy(&data_bytes, data, 8);
  data_bytes %= std::uint64_t{1} << 32;
  std::string_view json(reinterpret_cast<char const*>(data + 8), size - 8);
  try {
    auto header = tessel::parse_safetensors_header(json, data_bytes, "fuzz");
    for (auto const& e : header.entries)
      if (e.begin > e.end || e.end > data_bytes) __builtin_trap();
  } catch (tessel::Error const&) {
  }
  return 0;
}
