#pragma once
// JAX's type promotion for the dtypes tessel has, decided at compile time from the operand types.
// C++ arithmetic scalars are weakly typed, like Python scalars in JAX: `x * 2.0` keeps x's
// float32 (or bfloat16), `i * 2.5` on an int32 tensor gives float32, `i + 1` stays int32. The
// lattice (jax.numpy.promote_types): bool < int32 < {bfloat16, float16} < float32 < float64, and
// bfloat16 with float16 meet at float32.
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
template <class T>
struct strength {
  static constexpr int rank = std::same_as<T, bool>           ? 0
                              : std::same_as<T, std::int32_t> ? 1
                              : HalfFloat<T>                  ? 2
                              : std::same_as<T, float>        ? 3
                                                              : 4;
};

template <class A, class B>
struct promote2 {  // both strong: the larger on the lattice; the two 16-bit floats meet at float32
  using type = std::conditional_t<HalfFloat<A> && HalfFloat<B> && !std::same_as<A, B>, float,
                                  std::conditional_t<(strength<A>::rank >= strength<B>::rank), A, B>>;
};
template <class A, class W>
struct promote2<A, Weak<W>> {  // a weak float lifts integers to float32; otherwise the strong type wins
  using type = std::conditional_t<std::floating_point<W> && !FloatingElement<A>, float, A>;
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

// The floating type unary math (exp, tanh, ...) computes in: integers go to float32, as in JAX.
template <class T>
using float_of_t = std::conditional_t<FloatingElement<T>, T, float>;

}  // namespace tessel
