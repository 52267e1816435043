#pragma once
// jax.jit: a function over tensors. A body that returns an expression is captured on each call,
// planned once per (expression type, shapes, shardings) and run from the cached plan afterwards: a
// repeated call costs a hash, a compare and the kernel launches. A body that evaluates tensors
// itself (a whole forward, block by block) and returns a Tensor is recorded on its first call with
// each argument signature and replayed after that (runtime/program.hpp): its evaluations' plans
// run one after the other, and the body itself does not run again. A body returning several
// (a std::tuple of tensors or expressions, a std::vector of tensors: runtime/jit_results.hpp) is
// recorded likewise, and a std::vector of tensors may be an argument (a model's KV caches).
#include <bit>
#include <concepts>
#include <format>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/runtime/device_put.hpp"
#include "tessel/runtime/evaluate.hpp"
#include "tessel/runtime/jit_results.hpp"
#include "tessel/runtime/program.hpp"
#include "tessel/runtime/shard_map_scope.hpp"

namespace tessel {

namespace detail {

// What a recorded program is keyed on: each tensor argument's dtype, shape, sharding and which
// earlier argument (if any) is the same tensor, each C++ scalar argument's value, and the cost
// model the plans were made with.
struct ProgramKey {
  std::vector<std::uint64_t> words;
  std::vector<NamedSharding> shardings;
  std::vector<ImplPtr> tensors;  // the call's tensor arguments (not compared)
  bool keyable = true;           // false: an argument of another kind, so the body runs each call

  void word(std::uint64_t w) { words.push_back(w); }
  bool operator==(ProgramKey const& o) const { return words == o.words && shardings == o.shardings; }

  template <Element T>
  void add(Tensor<T> const& t) {
    std::uint64_t same = tensors.size();
    for (std::size_t i = 0; i < tensors.size(); ++i)
      if (tensors[i].get() == t.impl_ptr().get()) same = i;
    tensors.push_back(t.impl_ptr());
    TensorImpl const& impl = t.impl();
    word(static_cast<std::uint64_t>(impl.dtype));
    word(same);
    word(impl.varying);
    word(static_cast<std::uint64_t>(impl.shape.rank()));
    for (int d = 0; d < impl.shape.rank(); ++d) word(static_cast<std::uint64_t>(impl.shape[d]));
    shardings.push_back(impl.sharding);
  }
  template <class T>
    requires std::is_arithmetic_v<T>
  void add(T const& v) {
    word(sizeof(T) << 2 | std::is_floating_point_v<T> << 1 | std::is_signed_v<T>);
    if constexpr (std::is_floating_point_v<T>) word(std::bit_cast<std::uint64_t>(static_cast<double>(v)));
    else word(static_cast<std::uint64_t>(v));
  }
  // A list of tensors (a model's caches, one per layer): each one, after their count.
  template <Element T>
  void add(std::vector<Tensor<T>> const& list) {
    word(0xfff0 + list.size());
    for (auto const& t : list) add(t);
  }
  template <class T>
  void add(T const&) {
    keyable = false;
  }
};

// A jitted function's recorded programs, one per key; entries are never removed, so a Program
// found stays valid while the function lives.
class ProgramCache {
 public:
  struct Entry {
    ProgramKey key;
    std::optional<Program> program;  // none: the body is not replayable (why_not)
    std::string why_not;
  };
  Entry const* find(ProgramKey const& key) const {
    std::lock_guard lock(mutex_);
    for (auto const& e : entries_)
      if (e->key == key) return e.get();
    return nullptr;
  }
  Entry const* insert(ProgramKey key, std::optional<Program> program, std::string why_not) {
    std::lock_guard lock(mutex_);
    for (auto const& e : entries_)  // another thread recorded it meanwhile
      if (e->key == key) return e.get();
    key.tensors.clear();
    entries_.push_back(std::make_unique<Entry>(Entry{std::move(key), std::move(program), std::move(why_not)}));
    return entries_.back().get();
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

}  // namespace detail

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
    std::string not_recorded;
    if constexpr (recordable<Args...>) {
      // A recorded body is explained from its program: nothing runs once it is recorded.
      auto const* entry = recorded(std::index_sequence_for<Args...>{}, args...);
      if (entry && entry->program)
        return entry->program->explain() + plan::memory_analysis_text(memory_analysis(args...));
      if (entry) not_recorded = "not recorded (a replay would not repeat " + entry->why_not + "), so the body ran again:\n";
    }
    if constexpr (returns_several<Args...>) {
      // No one plan to show: each result had its own evaluation.
      return not_recorded.empty() ? "not recorded: an argument is neither a tensor, a list of tensors nor a scalar\n"
                                  : not_recorded;
    } else {
      detail::ShardMapExplainer inside;
      std::string own =
          trace(std::index_sequence_for<Args...>{}, [&](auto const& e) { return tessel::explain(e, out_); }, args...);
      if (inside.empty()) return not_recorded + own;
      return not_recorded + "evaluated inside the function:\n" + inside.text() + "-- the function's own plan:\n" + own;
    }
  }
  // What each device holds while a call with these arguments runs, as JAX's
  // jitted.lower(...).compile().memory_analysis() (plan/memory_analysis.hpp): a recorded body's
  // whole program (recorded by one call if it is not yet), else the plan of the expression it returns.
  template <class... Args>
  [[nodiscard]] plan::MemoryAnalysis memory_analysis(Args const&... args) const {
    return analyse_memory(std::index_sequence_for<Args...>{}, args...);
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

  // What the body returns for these arguments (not called). Placing an argument keeps its type,
  // and naming place() here would use this class before it is complete (clang refuses that).
  template <class... Args>
  using result_t = std::remove_cvref_t<std::invoke_result_t<F const&, Args const&...>>;
  template <class... Args>
  static constexpr bool returns_tensor = is_tensor_v<result_t<Args...>>;
  // Several results (a tuple of tensors or expressions, a vector of tensors): always a program.
  template <class... Args>
  static constexpr bool returns_several = detail::several_results_v<result_t<Args...>>;
  template <class... Args>
  static constexpr bool recordable = returns_tensor<Args...> || returns_several<Args...>;

  template <std::size_t... I, class... Args>
  auto call(std::index_sequence<I...>, Args const&... args) const {
    check_arity(sizeof...(Args));
    if constexpr (recordable<Args...>) {
      return call_recorded(place(args, I)...);
    } else {
      auto result = f_(place(args, I)...);
      if constexpr (Expression<decltype(result)>) return eval(result, out_);
      else if (out_) return device_put(result, *out_);
      else return result;
    }
  }

  // The body run as a plain function, its expressions evaluated, with out_shardings applied.
  template <class... Placed>
  auto run_body(Placed const&... placed) const {
    auto result = detail::as_tensors(f_(placed...));
    if (out_) result = detail::put_all(result, *out_);
    return result;
  }

  template <class... Placed>
  detail::ProgramKey key_of(Placed const&... placed) const {
    detail::ProgramKey key;
    (key.add(placed), ...);
    plan::model_signature(plan::cost_model(), key);
    return key;
  }

  // A body returning tensors: replayed when recorded for this key, recorded when it can be.
  template <class... Placed>
  auto call_recorded(Placed const&... placed) const {
    using R = std::remove_cvref_t<decltype(detail::as_tensors(f_(placed...)))>;
    // Inside another jitted body being recorded, or inside shard_map: the body runs as it is (its
    // evaluations are the outer recording's).
    if (detail::program_recorder != nullptr || detail::active_shard_map_mesh() != nullptr) return R(run_body(placed...));
    auto key = key_of(placed...);
    if (!key.keyable) return R(run_body(placed...));
    if (auto const* entry = programs_->find(key)) {
      if (entry->program) return detail::from_impls<R>(entry->program->run(key.tensors));
      return R(run_body(placed...));
    }
    auto tensors = key.tensors;
    detail::ProgramRecorder recorder(tensors);
    R result = run_body(placed...);
    auto program = recorder.finish(detail::impls_of(result));
    programs_->insert(std::move(key), std::move(program), recorder.why_not());
    return result;
  }

  // The program entry for these arguments, recording it (one call) if there is none yet; null
  // when the arguments cannot be keyed.
  template <std::size_t... I, class... Args>
  detail::ProgramCache::Entry const* recorded(std::index_sequence<I...>, Args const&... args) const {
    check_arity(sizeof...(Args));
    auto find = [&](auto const&... placed) { return programs_->find(key_of(placed...)); };
    if (auto const* entry = find(place(args, I)...)) return entry;
    if (detail::program_recorder != nullptr || detail::active_shard_map_mesh() != nullptr) return nullptr;
    (void)call_recorded(place(args, I)...);
    return find(place(args, I)...);
  }

  template <std::size_t... I, class... Args>
  plan::MemoryAnalysis analyse_memory(std::index_sequence<I...> seq, Args const&... args) const {
    if constexpr (recordable<Args...>) {
      if (auto const* entry = recorded(seq, args...); entry && entry->program)
        return entry->program->memory_analysis(key_of(place(args, I)...).tensors);
    }
    if constexpr (returns_several<Args...>)
      throw Error("jit: memory_analysis of a body returning several tensors needs it recorded, and it was not "
                  "(explain says why)");
    else return plan::memory_analysis(plan(args...), detail::memory_layout());
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
  std::shared_ptr<detail::ProgramCache> programs_ = std::make_shared<detail::ProgramCache>();
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
