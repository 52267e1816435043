#pragma once
// A GPU thread's reduce_row keeps its 64 lanes scalar (backend/host/lane_vectors.hpp makes them
// native vectors on host CPUs): the order, and so the bits, are the same.
#include <cstdint>

#include <Kokkos_Macros.hpp>

namespace tessel::backend {

template <class Op, class T, bool Unit, bool Fused, class Ev>
KOKKOS_FORCEINLINE_FUNCTION constexpr bool reduce_in_vectors(Ev const&, std::int64_t, T&) {
  return false;
}

}  // namespace tessel::backend
