#pragma once
// A count given as text (TESSEL_NUM_DEVICES, TESSEL_GPUS): a whole number from 1 to 65536 and
// nothing after it, or none; each caller says in its own words what was wrong.
#include <cstdlib>
#include <optional>

namespace tessel::detail {

inline std::optional<int> positive_count(char const* text) {
  char* end = nullptr;
  long const n = std::strtol(text, &end, 10);
  if (*end != '\0' || n < 1 || n > 65536) return std::nullopt;
  return static_cast<int>(n);
}

}  // namespace tessel::detail
