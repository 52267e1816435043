#include "tessel/runtime/pool_order_check.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <string>

#include <Kokkos_Core.hpp>

namespace tessel::detail {
namespace {

enum class Mode { off, stop, report };

Mode mode_from_environment() {
  char const* env = std::getenv("TESSEL_CHECK_POOL_ORDER");
  if (env == nullptr || *env == '\0' || std::strcmp(env, "0") == 0) return Mode::off;
  return std::strcmp(env, "report") == 0 ? Mode::report : Mode::stop;
}

struct State {
  Mode mode = Mode::off;
  std::mutex mutex;
  bool unfenced = false;     // work launched since the last fence of every device
  std::string last_launch;   // its name
  std::set<std::string> reported;
};

State& state() {
  static State* s = new State;  // (never destroyed: buffers go back to the pool at exit)
  return *s;
}

thread_local int host_work = 0;

void launched(char const* name) {
  if (host_work > 0) return;
  auto& s = state();
  std::lock_guard lock(s.mutex);
  s.unfenced = true;
  s.last_launch = name != nullptr ? name : "";
}

void begin_kernel(char const* name, std::uint32_t, std::uint64_t*) { launched(name); }
void end_kernel(std::uint64_t) {}

void begin_copy(Kokkos::Tools::SpaceHandle, char const* dst, void const*, Kokkos::Tools::SpaceHandle, char const*,
                void const*, std::uint64_t) {
  launched(dst);
}

void begin_fence(char const* name, std::uint32_t id, std::uint64_t*) {
  // Only a fence of every device covers every stream: Kokkos gives it the instance bits 0. The fences
  // Kokkos adds around kernels for a tool are not the program's.
  if ((id & 0x00ffffffu) != 0 || std::strstr(name, "Profile Tool Fence") != nullptr) return;
  auto& s = state();
  std::lock_guard lock(s.mutex);
  s.unfenced = false;
}
void end_fence(std::uint64_t) {}

}  // namespace

void install_pool_order_check() {
  auto& s = state();
  s.mode = mode_from_environment();
  if (Kokkos::Tools::profileLibraryLoaded()) s.mode = Mode::off;  // (its callbacks stay the tool's)
  if (s.mode == Mode::off) return;
  namespace T = Kokkos::Tools::Experimental;
  T::set_begin_parallel_for_callback(begin_kernel);
  T::set_end_parallel_for_callback(end_kernel);
  T::set_begin_parallel_reduce_callback(begin_kernel);
  T::set_end_parallel_reduce_callback(end_kernel);
  T::set_begin_parallel_scan_callback(begin_kernel);
  T::set_end_parallel_scan_callback(end_kernel);
  T::set_begin_deep_copy_callback(begin_copy);
  T::set_begin_fence_callback(begin_fence);
  T::set_end_fence_callback(end_fence);
}

HostWork::HostWork() { ++host_work; }
HostWork::~HostWork() { --host_work; }

void note_device_work(char const* what) {
  if (state().mode != Mode::off) launched(what);
}

void check_pool_order(std::size_t bytes) {
  auto& s = state();
  if (s.mode == Mode::off) return;
  std::lock_guard lock(s.mutex);
  if (!s.unfenced || !s.reported.insert(s.last_launch).second) return;
  std::fprintf(stderr,
               "tessel: pool order check: a buffer of %zu bytes went back to the pool after \"%s\" was launched and "
               "before a fence of every device; on a GPU that work may still use it while another device's stream "
               "reuses it\n",
               bytes, s.last_launch.c_str());
  if (s.mode == Mode::stop) {
    std::fflush(stderr);
    std::_Exit(70);  // (not abort: a test runner then reads the message instead of a crash)
  }
}

}  // namespace tessel::detail
