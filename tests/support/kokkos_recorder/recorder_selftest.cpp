// Self-test of tessel_kokkos_recorder: a plain Kokkos program, run by CTest with the recorder
// loaded through KOKKOS_TOOLS_LIBS (see tessel_recorded_test), that checks the exact lines the
// recorder writes, while the process runs (flushed at popRegion and by tessel_recorder_flush) and
// after Kokkos::finalize().
#include <Kokkos_Core.hpp>
#include <Kokkos_Profiling_ScopedRegion.hpp>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

using Lines = std::vector<std::string>;

Lines read_lines(const char* path) {
  Lines lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

int failures = 0;

void expect_file(const char* path, const Lines& expected, const char* when) {
  const Lines got = read_lines(path);
  if (got == expected) return;
  ++failures;
  std::fprintf(stderr, "FAILED %s: '%s' holds\n", when, path);
  for (const auto& line : got) std::fprintf(stderr, "  |%s|\n", line.c_str());
  std::fprintf(stderr, "expected\n");
  for (const auto& line : expected) std::fprintf(stderr, "  |%s|\n", line.c_str());
}

void expect(bool ok, const char* what) {
  if (ok) return;
  ++failures;
  std::fprintf(stderr, "FAILED: %s\n", what);
}

}  // namespace

int main(int argc, char* argv[]) {
  const char* out = std::getenv("TESSEL_RECORDER_OUT");
  if (out == nullptr || *out == '\0' || std::getenv("KOKKOS_TOOLS_LIBS") == nullptr) {
    std::fprintf(stderr,
                 "run this through CTest: it needs KOKKOS_TOOLS_LIBS and TESSEL_RECORDER_OUT\n");
    return 1;
  }
  // A file from an earlier run must not pass for this run's events.
  std::remove(out);

  Lines expected;
  Kokkos::initialize(argc, argv);
  {
    // Kokkos only prints an error and goes on when the library does not load.
    expect(Kokkos::Tools::profileLibraryLoaded(), "Kokkos loaded the library in KOKKOS_TOOLS_LIBS");

    Kokkos::Profiling::pushRegion("a");
    Kokkos::parallel_for("k1", Kokkos::RangePolicy<>(0, 16), KOKKOS_LAMBDA(int) {});
    long sum = 0;
    Kokkos::parallel_reduce(
        "r1", Kokkos::RangePolicy<>(0, 16), KOKKOS_LAMBDA(int i, long& acc) { acc += i; }, sum);
    Kokkos::Profiling::popRegion();
    expect(sum == 120, "the reduction ran (0+1+...+15 is 120)");
    expected = {"region a", "for k1", "reduce r1", "end"};
    expect_file(out, expected, "after popRegion");

    {
      Kokkos::Profiling::ScopedRegion region("b");
      int total = 0;
      Kokkos::parallel_scan(
          "s1", Kokkos::RangePolicy<>(0, 4),
          KOKKOS_LAMBDA(int i, int& partial, bool) { partial += i; }, total);
      expect(total == 6, "the scan ran (0+1+2+3 is 6)");
    }
    expected.insert(expected.end(), {"region b", "scan s1", "end"});
    expect_file(out, expected, "after the ScopedRegion ended");

    Kokkos::parallel_for("k2", Kokkos::RangePolicy<>(0, 4), KOKKOS_LAMBDA(int) {});
    // Kokkos dlopens the library RTLD_GLOBAL, so its symbols are reachable without linking it.
    auto flush = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "tessel_recorder_flush"));
    expected.push_back("for k2");
    expect(flush != nullptr, "dlsym finds tessel_recorder_flush");
    if (flush != nullptr) {
      flush();
      expect_file(out, expected, "after tessel_recorder_flush()");
    }

    // Without initialization: no View::initialization events, only the copy (destination first).
    Kokkos::View<double*> dst(Kokkos::view_alloc("dst", Kokkos::WithoutInitializing), 8);
    Kokkos::View<double*> src(Kokkos::view_alloc("src", Kokkos::WithoutInitializing), 8);
    Kokkos::deep_copy(dst, src);
    expected.push_back("copy dst->src");
  }
  Kokkos::finalize();
  // Finalize flushes what came after the last flush, and adds nothing of its own.
  expect_file(out, expected, "after Kokkos::finalize()");
  if (failures == 0) std::printf("recorder self-test: %zu events as expected\n", expected.size());
  return failures == 0 ? 0 : 1;
}
