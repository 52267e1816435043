// Reproducer of a fuzz finding (see README.md here for the build line and what it shows).
#include "tessel/tessel.hpp"
static tessel::ScopeGuard guard;  // for the whole process
int main() {
  auto x = tessel::device_put(std::vector<float>{1, 2}, {2});
}  // x's shard goes back to the pool; at exit the pool (created after the guard) is destroyed first
