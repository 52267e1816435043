#pragma once
// jax.jit: a function over tensors, captured as an expression on each call, planned once per
// (expression type, shapes, shardings) and run from the cached plan afterwards: a repeated call
// costs a hash, a compare and the kernel launches.
#include <format>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/runtime/evaluate.hpp"
#include "tessel/runtime/shard_map_scope.hpp"

namespace tessel {

template <class F>
class Jitted {
 public:
  Jitted(F f, std::vector<NamedSharding> in_shardings, std::optional<NamedSharding> out_sharding)
      : f_(std::move(f)), in_(std::move(in_shardings)), out_(std::move(out_sharding)) {}

  template <class... Args>
  auto operator()(Args const&... args) const {
    return call(std::index_sequence_for<Args...>{}, args...);
  }

  // The plan a call with these arguments runs (made and cached if needed).
  // With what f evaluates while it is traced (a shard_map it calls, with its body's plans) first.
  template <class... Args>
  [[nodiscard]] std::string explain(Args const&... args) const {
    detail::ShardMapExplainer inside;
    std::string own =
        trace(std::index_sequence_for<Args...>{}, [&](auto const& e) { return tessel::explain(e, out_); }, args...);
    if (inside.empty()) return own;
    return "evaluated inside the function:\n" + inside.text() + "-- the function's own plan:\n" + own;
  }
  template <class... Args>
  [[nodiscard]] plan::Plan const& plan(Args const&... args) const {
    return trace(std::index_sequence_for<Args...>{}, [&](auto const& e) -> plan::Plan const& { return plan_of(e, out_); },
                 args...);
  }

 private:
  // jit's in_shardings: arguments are moved there first (a no-op when they already are).
  template <class T>
  T const& place(T const& arg, std::size_t) const {
    return arg;
  }
  template <Element T>
  Tensor<T> place(Tensor<T> const& arg, std::size_t i) const {
    if (i >= in_.size()) return arg;
    return device_put(arg, in_[i]);
  }

  // jax.jit takes one in_sharding per argument (or none at all).
  void check_arity(std::size_t args) const {
    if (!in_.empty() && in_.size() != args)
      throw Error(std::format("jit: {} in_shardings for a call with {} argument{}; give one per argument (or none)",
                              in_.size(), args, args == 1 ? "" : "s"));
  }

  template <std::size_t... I, class... Args>
  auto call(std::index_sequence<I...>, Args const&... args) const {
    check_arity(sizeof...(Args));
    auto result = f_(place(args, I)...);
    if constexpr (Expression<decltype(result)>) return eval(result, out_);
    else if (out_) return device_put(result, *out_);
    else return result;
  }

  template <std::size_t... I, class G, class... Args>
  decltype(auto) trace(std::index_sequence<I...>, G&& g, Args const&... args) const {
    check_arity(sizeof...(Args));
    auto result = f_(place(args, I)...);
    if constexpr (Expression<decltype(result)>) return g(result);
    else return g(as_node(result));
  }

  F f_;
  std::vector<NamedSharding> in_;
  std::optional<NamedSharding> out_;
};

// jax.jit(f)
template <class F>
Jitted<F> jit(F f) {
  return Jitted<F>(std::move(f), {}, std::nullopt);
}
// jax.jit(f, in_shardings=...): the arguments are put on their shardings, and the result's
// sharding is what propagation gives.
template <class F>
Jitted<F> jit(F f, std::vector<NamedSharding> in_shardings) {
  return Jitted<F>(std::move(f), std::move(in_shardings), std::nullopt);
}
// jax.jit(f, in_shardings=..., out_shardings=...)
template <class F>
Jitted<F> jit(F f, std::vector<NamedSharding> in_shardings, NamedSharding out_sharding) {
  return Jitted<F>(std::move(f), std::move(in_shardings), std::move(out_sharding));
}

// The plan of a jitted call, as text.
template <class F, class... Args>
std::string explain(Jitted<F> const& f, Args const&... args) {
  return f.explain(args...);
}

}  // namespace tessel
