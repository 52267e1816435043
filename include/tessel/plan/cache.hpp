#pragma once
// Plans are cached by (expression type, shapes, shardings, reduction axes, requested output). A
// look-up hashes the expression by walking it and compares against stored signatures the same
// way, so a hit allocates nothing: the second call of the same computation costs a hash, a
// compare and the launches.
#include <bit>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <tuple>
#include <utility>
#include <vector>

#include "tessel/expr/node.hpp"
#include "tessel/plan/plan.hpp"

namespace tessel::plan {

struct HashSink {
  std::uint64_t h = 1469598103934665603ull;
  void word(std::uint64_t w) {
    h ^= w;
    h *= 1099511628211ull;
  }
};
struct RecordSink {
  std::vector<std::uint64_t>& words;
  void word(std::uint64_t w) { words.push_back(w); }
};
struct CompareSink {
  std::span<std::uint64_t const> words;
  std::size_t pos = 0;
  bool equal = true;
  void word(std::uint64_t w) {
    equal = equal && pos < words.size() && words[pos] == w;
    ++pos;
  }
  [[nodiscard]] bool matches() const { return equal && pos == words.size(); }
};

template <class Sink>
void sharding_signature(NamedSharding const& s, Shape const& shape, Sink& sink) {
  Mesh const& m = s.mesh();
  sink.word(static_cast<std::uint64_t>(m.num_devices()));
  for (int id : m.device_ids()) sink.word(static_cast<std::uint64_t>(id));
  for (std::size_t a = 0; a < m.num_axes(); ++a) {
    sink.word(static_cast<std::uint64_t>(m.axes().size(a)));
    // The name itself, 8 characters a word (a hash of it could let two meshes share a plan).
    auto name = m.axes().name(a).view();
    sink.word(name.size());
    for (std::size_t i = 0; i < name.size(); i += 8) {
      std::uint64_t w = 0;
      for (std::size_t j = i; j < i + 8 && j < name.size(); ++j) w = w << 8 | static_cast<unsigned char>(name[j]);
      sink.word(w);
    }
  }
  // The spec's own length: a spec longer than the rank must reach the planner (which refuses it),
  // not match a plan cached for the spec's first entries.
  sink.word(s.spec().size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    auto axes = s.layout().dim_axes(d);
    sink.word(axes.size());
    for (auto a : axes) sink.word(a);
  }
}

// A per-type address: unique for each expression type in the program.
template <class E>
inline constexpr char type_anchor = 0;

// What an op tag's sign() writes to: words, shardings (sharding_signature), tensor leaves (by
// which earlier leaf holds the same tensor) and scalars (by which earlier scalar has the same
// value): the patterns the planner's common-subexpression sharing depends on, GraphNode::alias.
template <class Sink>
struct SignatureSink {
  Sink& sink;
  LeafIdentities& leaves;
  void word(std::uint64_t w) { sink.word(w); }
  void sharding(NamedSharding const& s, Shape const& shape) { sharding_signature(s, shape, sink); }
  void leaf(void const* p) { sink.word(static_cast<std::uint64_t>(leaves.alias(p, leaves.occurrences++))); }
  // A C++ scalar: which earlier scalar has its value (not the value: the plan runs any values with
  // the same pattern of equal scalars).
  void scalar(std::uint64_t bits, bool integral) {
    sink.word(static_cast<std::uint64_t>(leaves.scalar_alias(bits, integral, leaves.scalar_occurrences++)));
  }
};

// The children's signatures, then the node's own (Tag::sign). One instantiation level per nesting
// level (node.hpp, arity).
template <class E, class Sink>
void signature(E const& e, SignatureSink<Sink>& sink) {
#define TESSEL_STEP(K) signature(std::get<K>(e.children), sink)
  TESSEL_FOR_EACH_CHILD(E, TESSEL_STEP)
#undef TESSEL_STEP
  E::tag::sign(e.data, e.shape(), sink);
}

// The cost model is part of the key: after a calibration (or a user's change) plans are made
// again with the new figures instead of the cached choices.
template <class Sink>
void model_signature(CostModel const& m, Sink& sink) {
  auto word = [&](double v) { sink.word(std::bit_cast<std::uint64_t>(v)); };
  word(m.latency_us);
  word(m.bandwidth_GBps);
  for (AlphaBeta const* ab : {&m.all_gather, &m.reduce_scatter, &m.all_reduce, &m.all_to_all, &m.collective_permute,
                              &m.local_copy}) {
    word(ab->latency_us);
    word(ab->bandwidth_GBps);
  }
}

template <class E, class Sink>
void full_signature(E const& e, std::optional<NamedSharding> const& out, Sink& sink) {
  sink.word(reinterpret_cast<std::uintptr_t>(&type_anchor<E>));
  model_signature(cost_model(), sink);
  LeafIdentities leaves;
  SignatureSink<Sink> node_sink{sink, leaves};
  signature(e, node_sink);
  if (out) sharding_signature(*out, e.shape(), sink);
  else sink.word(0xdead);
}

struct CacheEntry {
  std::vector<std::uint64_t> words;
  Plan plan;
};

namespace detail {
std::unique_lock<std::mutex> lock_cache();
// Entries with this hash (call with the lock held); entries are never removed, so a Plan
// reference stays valid for the program's life.
std::vector<std::unique_ptr<CacheEntry>>& bucket(std::uint64_t hash);
}  // namespace detail

// The plan for this expression and requested output sharding, made on first use. A cached plan
// is never changed: what runs it (its kernels) the executor keeps beside it.
template <class E>
Plan const& plan_for(E const& e, std::optional<NamedSharding> const& out) {
  if constexpr (!tessel::detail::depth_ok<E>) {
    static Plan const none;  // not reached: too deep an expression does not compile (node.hpp)
    return none;
  } else {
    HashSink hash;
    full_signature(e, out, hash);
    auto lock = detail::lock_cache();
    auto& entries = detail::bucket(hash.h);
    for (auto const& entry : entries) {
      CompareSink cmp{entry->words};
      full_signature(e, out, cmp);
      if (cmp.matches()) return entry->plan;
    }
    auto entry = std::make_unique<CacheEntry>();
    RecordSink rec{entry->words};
    full_signature(e, out, rec);
    Graph g;
    describe(e, g);
    entry->plan = make_plan(std::move(g), out, cost_model());
    entry->plan.priced_by = cost_model_source();
    entries.push_back(std::move(entry));
    return entries.back()->plan;
  }
}

// Number of cached plans (for tests and tools).
std::size_t cached_plans();

}  // namespace tessel::plan
