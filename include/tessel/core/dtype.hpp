#pragma once
// Element types. A tensor's dtype is part of its C++ type (Tensor<float>); DType is the same fact
// as a value, for messages and for type-erased code in src/.
//
// bfloat16 and float16 (core/half.hpp) are storage types: kernels compute on them in float
// (compute_t) and round each op's result, as XLA does on CPU. bool is what comparisons give (one
// byte, 0 or 1); int8 and uint8 hold quantized weights; int64 is JAX's int64 under jax_enable_x64
// (tessel's default integer, what C++ integer scalars and indices give, stays int32 as JAX's).
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tessel/core/half.hpp"

namespace tessel {

enum class DType : std::uint8_t { float32, float64, int32, bfloat16, float16, int64, int8, uint8, bool_ };

template <class T>
concept HalfFloat = std::same_as<T, bfloat16> || std::same_as<T, float16>;

template <class T>
concept IntegerElement = std::same_as<T, std::int32_t> || std::same_as<T, std::int64_t> ||
                         std::same_as<T, std::int8_t> || std::same_as<T, std::uint8_t>;

template <class T>
concept Element = std::same_as<T, float> || std::same_as<T, double> || HalfFloat<T> || IntegerElement<T> ||
                  std::same_as<T, bool>;

// Floating element types, the 16-bit ones included (std::floating_point knows only the built-in ones).
template <class T>
concept FloatingElement = std::floating_point<T> || HalfFloat<T>;

// The type a kernel computes a value of type T in: float for the 16-bit floats, T otherwise.
template <class T>
using compute_t = std::conditional_t<HalfFloat<T>, float, T>;

template <Element T>
inline constexpr DType dtype_of = std::same_as<T, float>      ? DType::float32
                                  : std::same_as<T, double>   ? DType::float64
                                  : std::same_as<T, bfloat16> ? DType::bfloat16
                                  : std::same_as<T, float16>  ? DType::float16
                                  : std::same_as<T, std::int64_t> ? DType::int64
                                  : std::same_as<T, std::int8_t>  ? DType::int8
                                  : std::same_as<T, std::uint8_t> ? DType::uint8
                                  : std::same_as<T, bool>         ? DType::bool_
                                                                  : DType::int32;

constexpr std::string_view name(DType d) {
  switch (d) {
    case DType::float32: return "float32";
    case DType::float64: return "float64";
    case DType::int32: return "int32";
    case DType::bfloat16: return "bfloat16";
    case DType::float16: return "float16";
    case DType::int64: return "int64";
    case DType::int8: return "int8";
    case DType::uint8: return "uint8";
    case DType::bool_: return "bool";
  }
  return "?";
}

// The dtype `name` names ("float32", ...); float32 for a name that is none (never produced).
constexpr DType dtype_named(std::string_view n) {
  for (DType d : {DType::float64, DType::int32, DType::bfloat16, DType::float16, DType::int64, DType::int8, DType::uint8,
                  DType::bool_})
    if (name(d) == n) return d;
  return DType::float32;
}

constexpr std::size_t size_of(DType d) {
  switch (d) {
    case DType::float64:
    case DType::int64: return 8;
    case DType::bfloat16:
    case DType::float16: return 2;
    case DType::int8:
    case DType::uint8:
    case DType::bool_: return 1;
    default: return 4;
  }
}

// Calls f with a value of the element type `d` names: how type-erased code in src/ runs a typed
// kernel for a tensor's dtype.
template <class F>
constexpr decltype(auto) visit(DType d, F&& f) {
  switch (d) {
    case DType::float32: return f(float{});
    case DType::float64: return f(double{});
    case DType::bfloat16: return f(bfloat16{});
    case DType::float16: return f(float16{});
    case DType::int64: return f(std::int64_t{});
    case DType::int8: return f(std::int8_t{});
    case DType::uint8: return f(std::uint8_t{});
    case DType::bool_: return f(bool{});
    case DType::int32: break;
  }
  return f(std::int32_t{});
}

}  // namespace tessel
