// The reduction order (runtime/reduction_order.hpp), the bit contract every backend keeps: a row
// of length n reduces in 64 lanes (lane j takes elements j, j + 64, ... of the whole blocks, in
// order), the lanes meet in a tree (j with j + 32, then j with j + 16, ...), the tree joins the
// accumulator, then the last n % 64 elements join one by one. Checked against that order written
// out here in plain C++, on both of reduce_row's paths (a contiguous row, read through row_data(),
// and a row computed element by element), and shown to differ from a plain left-to-right sum, so
// that a reduction in another order would fail.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "support/data.hpp"
#include "tessel/runtime/kernel_eval.hpp"

using namespace tessel;

namespace {

// The documented order, written out.
template <class T>
T documented_sum(std::vector<T> const& row, T acc) {
  constexpr std::size_t lanes = detail::reduction_lanes;
  std::size_t const whole = row.size() - row.size() % lanes;
  std::vector<T> lane(lanes, T(0));
  for (std::size_t e = 0; e < whole; e += lanes)
    for (std::size_t j = 0; j < lanes; ++j) lane[j] = lane[j] + row[e + j];
  if (whole > 0) {
    for (std::size_t width = lanes / 2; width >= 1; width /= 2)
      for (std::size_t j = 0; j < width; ++j) lane[j] = lane[j] + lane[j + width];
    acc = acc + lane[0];
  }
  for (std::size_t e = whole; e < row.size(); ++e) acc = acc + row[e];
  return acc;
}

// A row computed element by element (no row_data(): reduce_row's blocks-of-values path).
template <class T>
struct ComputedRow {
  T const* row;
  template <bool Unit, bool Fused>
  T at(std::int64_t e) const {
    return row[e];
  }
};

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

}  // namespace

TEMPLATE_TEST_CASE("reduce_row sums in the documented lane order, on both of its paths", "[runtime][reduce_order]",
                   float, double) {
  using T = TestType;
  bool some_row_differs_from_left_to_right = false;
  for (std::int64_t length : {0, 1, 7, 63, 64, 65, 127, 128, 1000, 4113}) {
    INFO("row length " << length);
    auto row = test::scattered_values<T>(length, static_cast<unsigned>(length) + 1, 20);
    T const start = T(0.25);
    T const want = documented_sum(row, start);
    T const contiguous =
        detail::reduce_row<ops::sum_reduce, T, true, false>(detail::RowEval<T>{row.data()}, length, start);
    T const computed = detail::reduce_row<ops::sum_reduce, T, false, false>(ComputedRow<T>{row.data()}, length, start);
    CHECK(same_bits(contiguous, want));
    CHECK(same_bits(computed, want));
    T plain = start;
    for (T v : row) plain = plain + v;
    if (!same_bits(plain, want)) some_row_differs_from_left_to_right = true;
    // A row shorter than the lanes is summed in order, as XLA does.
    if (length < detail::reduction_lanes) CHECK(same_bits(plain, want));
  }
  CHECK(some_row_differs_from_left_to_right);
}
