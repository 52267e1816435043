#pragma once
// Element types. A tensor's dtype is part of its C++ type (Tensor<float>); DType is the same fact
// as a value, for messages and for type-erased code in src/.
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tessel {

enum class DType : std::uint8_t { float32, float64, int32 };

template <class T>
concept Element = std::same_as<T, float> || std::same_as<T, double> || std::same_as<T, std::int32_t>;

template <Element T>
inline constexpr DType dtype_of = std::same_as<T, float>    ? DType::float32
                                  : std::same_as<T, double> ? DType::float64
                                                            : DType::int32;

constexpr std::string_view name(DType d) {
  switch (d) {
    case DType::float32: return "float32";
    case DType::float64: return "float64";
    case DType::int32: return "int32";
  }
  return "?";
}

constexpr std::size_t size_of(DType d) { return d == DType::float64 ? 8 : 4; }

// Calls f with a value of the element type `d` names: how type-erased code in src/ runs a typed
// kernel for a tensor's dtype.
template <class F>
constexpr decltype(auto) visit(DType d, F&& f) {
  switch (d) {
    case DType::float32: return f(float{});
    case DType::float64: return f(double{});
    case DType::int32: break;
  }
  return f(std::int32_t{});
}

}  // namespace tessel
