#pragma once
// A switch given in the environment (TESSEL_ASYNC, TESSEL_CHECK_POOL_ORDER, TESSEL_HOST_GRAPHS):
// on when set to anything but empty or "0".
#include <cstdlib>
#include <cstring>

namespace tessel::detail {

inline bool switched_on(char const* name) {
  char const* env = std::getenv(name);
  return env != nullptr && *env != '\0' && std::strcmp(env, "0") != 0;
}

}  // namespace tessel::detail
