// What the exchanges between processes share whatever carries them: the watchdog's limit.
#include <cstdlib>
#include <format>

#include "tessel/core/error.hpp"
#include "world.hpp"

namespace tessel::distributed {

double collective_timeout_s() {
  static double const limit = [] {
    char const* env = std::getenv("TESSEL_COLLECTIVE_TIMEOUT_S");
    if (env == nullptr || *env == '\0') return 300.0;
    char* end = nullptr;
    double v = std::strtod(env, &end);
    if (*end != '\0' || !(v > 0))
      throw Error(std::format("TESSEL_COLLECTIVE_TIMEOUT_S='{}' is not a number of seconds above 0", env));
    return v;
  }();
  return limit;
}

}  // namespace tessel::distributed
