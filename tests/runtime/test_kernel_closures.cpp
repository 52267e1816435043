// A kernel reads its closure where the host wrote it. nvcc 12.9 and later lay out a member that
// follows a [[no_unique_address]] empty member differently in device and host code; a View's
// extents were such a member (Kokkos' mdspan), so a fill's bounds and the members after a captured
// View came from the wrong bytes on GPUs (CMakeLists.txt defines the mdspan macro that avoids it).
// Host builds share one layout and pass either way; these cases are the GPU check's.
#include <catch2/catch_test_macros.hpp>

#include <cstdint>

#include "tessel/runtime/device.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;

namespace {

using Space = ExecSpace;
using Memory = MemSpace;

// A functor with members on both sides of a View, as a lambda capturing them has.
struct WriteAround {
  std::int32_t before;
  Kokkos::View<std::int32_t*, Memory> out;
  std::int32_t after;
  Kokkos::View<std::int32_t*, Memory> second;
  std::int64_t last;
  KOKKOS_FUNCTION void operator()(std::int64_t i) const {
    out(i) = before + after;
    second(i) = static_cast<std::int32_t>(last);
  }
};

std::int64_t count_equal(Kokkos::View<std::int32_t*, Memory> const& v, std::int32_t value) {
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), v);
  std::int64_t n = 0;
  for (std::size_t i = 0; i < host.extent(0); ++i) n += host(i) == value;
  return n;
}

}  // namespace

TEST_CASE("a fill of a device View writes every element, and nothing past it", "[runtime][closures]") {
  Space exec = device(0).exec;
  Kokkos::View<std::int32_t*, Memory> all("all", 1000);
  Kokkos::deep_copy(exec, all, 0);
  auto part = Kokkos::subview(all, Kokkos::make_pair(100, 300));
  Kokkos::deep_copy(exec, part, 7);  // a non-zero fill is Kokkos' fill kernel (zero is a memset)
  exec.fence();
  CHECK(count_equal(all, 7) == 200);
  CHECK(count_equal(part, 7) == 200);
}

TEST_CASE("a kernel holding Views reads the members after them", "[runtime][closures]") {
  Space exec = device(0).exec;
  std::int64_t const n = 513;
  WriteAround f{40, Kokkos::View<std::int32_t*, Memory>("out", n), 2,
                Kokkos::View<std::int32_t*, Memory>("second", n), 1234567};
  Kokkos::parallel_for("tessel::test::write_around", Kokkos::RangePolicy<Space>(exec, 0, n), f);
  exec.fence();
  CHECK(count_equal(f.out, 42) == n);
  CHECK(count_equal(f.second, 1234567) == n);
}
