#pragma once
// What a jitted body may return, as jax.jit returns a pytree of arrays: one tensor or expression,
// a std::tuple of them (each expression evaluated), or a std::vector of tensors (a model's caches,
// one per layer). A body returning several is recorded and replayed as one program whose results
// are all of them (runtime/program.hpp); these helpers take such a result apart and put it back.
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessel/runtime/device_put.hpp"
#include "tessel/runtime/evaluate.hpp"

namespace tessel::detail {

template <class R>
inline constexpr bool several_results_v = false;
template <class... X>
inline constexpr bool several_results_v<std::tuple<X...>> = ((is_tensor_v<X> || Expression<X>) && ...);
template <class T>
inline constexpr bool several_results_v<std::vector<Tensor<T>>> = true;

// Each expression of a result evaluated (recorded like any evaluation of the body).
template <class X>
auto as_tensor(X const& x) {
  if constexpr (Expression<X>) return eval(x);
  else return x;
}
template <class R>
auto as_tensors(R const& r) {
  if constexpr (is_tensor_v<R> || Expression<R>) return as_tensor(r);
  else if constexpr (requires { std::tuple_size<R>::value; })
    return std::apply([](auto const&... x) { return std::tuple{as_tensor(x)...}; }, r);
  else return r;
}

// jit's out_shardings, one sharding for every result (a pytree prefix, as JAX allows).
template <class R>
R put_all(R const& r, NamedSharding const& sharding) {
  if constexpr (is_tensor_v<R>) return device_put(r, sharding);
  else if constexpr (requires { std::tuple_size<R>::value; })
    return std::apply([&](auto const&... t) { return R{device_put(t, sharding)...}; }, r);
  else {
    R out;
    for (auto const& t : r) out.push_back(device_put(t, sharding));
    return out;
  }
}

template <class R>
std::vector<ImplPtr> impls_of(R const& r) {
  if constexpr (is_tensor_v<R>) return {r.impl_ptr()};
  else if constexpr (requires { std::tuple_size<R>::value; })
    return std::apply([](auto const&... t) { return std::vector<ImplPtr>{t.impl_ptr()...}; }, r);
  else {
    std::vector<ImplPtr> out;
    for (auto const& t : r) out.push_back(t.impl_ptr());
    return out;
  }
}

template <class R>
R from_impls(std::vector<ImplPtr> const& values) {
  if constexpr (is_tensor_v<R>) {
    return R(values.front());
  } else if constexpr (requires { std::tuple_size<R>::value; }) {
    return [&]<std::size_t... I>(std::index_sequence<I...>) {
      return R{std::tuple_element_t<I, R>(values[I])...};
    }(std::make_index_sequence<std::tuple_size_v<R>>{});
  } else {
    R out;
    for (auto const& v : values) out.emplace_back(v);
    return out;
  }
}

}  // namespace tessel::detail
