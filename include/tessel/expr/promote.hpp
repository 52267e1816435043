#pragma once
// JAX's type promotion for the dtypes tessel has, decided at compile time from the operand types.
// C++ arithmetic scalars are weakly typed, like Python scalars in JAX: `x * 2.0` keeps x's
// float32 (or bfloat16), `i * 2.5` on an int32 tensor gives float32, `i + 1` stays int32 and
// `b + 1` on a bool tensor gives int32. The lattice (jax.numpy.promote_types): bool < uint8 <
// int32 < int64 and int8 < int32, every integer < {bfloat16, float16} < float32 < float64;
// bfloat16 with float16 meet at float32, and int8 with uint8 at int16, a dtype tessel does not
// store (an error says to astype one of them).
#include <concepts>
#include <cstdint>
#include <type_traits>

#include "tessel/core/dtype.hpp"

namespace tessel {

// A C++ scalar in an expression: its value type and that it is weak.
template <class T>
struct Weak {
  using type = T;
};

namespace detail {
// The promotion of int8 with uint8 (int16): above every dtype on the lattice, so that it stays the
// result of a longer promotion, and make_node refuses it with a message.
struct NeedsInt16 {};

template <class T>
struct strength {
  static constexpr int rank = std::same_as<T, bool>                                          ? 0
                              : std::same_as<T, std::uint8_t> || std::same_as<T, std::int8_t> ? 1
                              : std::same_as<T, std::int32_t>                                 ? 2
                              : std::same_as<T, std::int64_t>                                 ? 3
                              : HalfFloat<T>                                                  ? 4
                              : std::same_as<T, float>                                        ? 5
                              : std::same_as<T, double>                                       ? 6
                                                                                              : 7;
};

template <class A, class B>
struct promote2 {  // both strong: the larger on the lattice, except where two of a rank meet above it
  static constexpr bool halves_meet = HalfFloat<A> && HalfFloat<B> && !std::same_as<A, B>;
  static constexpr bool bytes_meet = strength<A>::rank == 1 && strength<B>::rank == 1 && !std::same_as<A, B>;
  using type = std::conditional_t<halves_meet, float,
                                  std::conditional_t<bytes_meet, NeedsInt16,
                                                     std::conditional_t<(strength<A>::rank >= strength<B>::rank), A, B>>>;
};
template <class A, class W>
struct promote2<A, Weak<W>> {  // a weak float lifts integers and bool to float32, a weak integer bool to int32
  using type = std::conditional_t<std::floating_point<W> && !FloatingElement<A>, float,
                                  std::conditional_t<std::same_as<A, bool>, std::int32_t, A>>;
};
template <class W>
struct promote2<NeedsInt16, Weak<W>> {
  using type = NeedsInt16;
};
template <class W, class B>
struct promote2<Weak<W>, B> : promote2<B, Weak<W>> {};
template <class V, class W>
struct promote2<Weak<V>, Weak<W>> {
  using type = Weak<std::conditional_t<std::floating_point<V> || std::floating_point<W>, double, int>>;
};
}  // namespace detail

template <class... Ts>
struct promote;
template <class T>
struct promote<T> {
  using type = T;
};
template <class A, class B, class... Rest>
struct promote<A, B, Rest...> : promote<typename detail::promote2<A, B>::type, Rest...> {};

// The value type operands of these (possibly weak) types are computed in.
template <class... Ts>
using promote_t = typename promote<Ts...>::type;

// The floating type unary math (exp, tanh, ...), true division and mean compute in: integers and
// bool go to float32, as in JAX, and int64 to float64, as under jax_enable_x64 (where int64 lives).
template <class T>
using float_of_t = std::conditional_t<FloatingElement<T>, T, std::conditional_t<std::same_as<T, std::int64_t>, double, float>>;

}  // namespace tessel
