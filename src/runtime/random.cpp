#include "tessel/runtime/random.hpp"
#include "tessel/runtime/stream.hpp"

#include <format>

#include "tessel/core/error.hpp"
#include "tessel/runtime/replay_hooks.hpp"

namespace tessel::random {

Key PRNGKey(std::int64_t seed) { return prng::PRNGKey(seed); }

std::vector<Key> split(Key key, int num) {
  if (num < 0) throw Error(std::format("random::split: num must be non-negative, got {}", num));
  std::vector<Key> keys;
  for (int i = 0; i < num; ++i) keys.push_back(prng::split(key, static_cast<std::uint32_t>(num), static_cast<std::uint32_t>(i)));
  return keys;
}

Key fold_in(Key key, std::uint32_t data) { return prng::fold_in(key, data); }

namespace detail {
namespace {

// Where a shard lies in the whole tensor, by value for the kernel. (At namespace scope: nvcc
// refuses a function-local type in a device lambda's captures.)
struct Geometry {
  int rank;
  std::int64_t local_extent[max_rank];
  std::int64_t start[max_rank];
  std::int64_t global_stride[max_rank];
};

// Fills one shard: element e of the shard sits at a global index whose row-major flat position is
// the counter, so the values do not depend on how the tensor is split.
template <class T>
void fill_shard(Device const& dev, T* out, Box const& index, Shape const& global, Key key, Distribution dist,
                compute_t<T> minval, compute_t<T> maxval) {
  Geometry g{};
  g.rank = global.rank();
  row_major_strides(global, g.global_stride);
  for (int d = 0; d < g.rank; ++d) {
    g.local_extent[d] = index[static_cast<std::size_t>(d)].size();
    g.start[d] = index[static_cast<std::size_t>(d)].start;
  }
  std::int64_t n = index.num_elements();
  tessel::detail::enqueue(dev, "tessel::random", [=](ExecSpace const& exec, char const* label) {
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecSpace>(exec, 0, n), KOKKOS_LAMBDA(std::int64_t e) {
        std::int64_t rest = e, flat = 0;
        for (int d = g.rank; d-- > 0;) {
          flat += (g.start[d] + rest % g.local_extent[d]) * g.global_stride[d];
          rest /= g.local_extent[d];
        }
        auto const counter = static_cast<std::uint64_t>(flat);
        // Everything the branches read is named here first: nvcc refuses a device lambda whose
        // first use of a captured variable is inside an `if constexpr`.
        T& result = out[e];
        bool const uniform = dist == Distribution::uniform;
        Key const k = key;
        compute_t<T> const lo = minval, hi = maxval;
        if constexpr (HalfFloat<T>) {
          std::uint32_t bits = prng::bits32(k, counter);
          result = uniform ? prng::half_uniform_from_bits<T>(bits, lo, hi) : prng::half_normal_from_bits<T>(bits);
        } else if constexpr (sizeof(T) == 4) {
          std::uint32_t bits = prng::bits32(k, counter);
          result = uniform ? prng::uniform_from_bits(bits, lo, hi) : prng::normal_from_bits(bits);
        } else {
          std::uint64_t bits = prng::bits64(k, counter);
          result = uniform ? prng::uniform_from_bits(bits, lo, hi) : prng::normal_from_bits(bits);
        }
      });
  });
}

}  // namespace

std::shared_ptr<tessel::detail::TensorImpl> draw(Key key, Shape const& shape, DType dtype,
                                                 NamedSharding const& sharding, Distribution dist, double minval,
                                                 double maxval) {
  tessel::detail::not_replayable("a random draw");
  // Replicas hold the same values (they depend on the box only): one buffer where they can.
  auto const owner = tessel::detail::replica_owners(shape, sharding);
  auto t = tessel::detail::TensorImpl::allocate(shape, dtype, sharding, owner);
  for (std::size_t pos = 0; pos < t->shards.size(); ++pos) {
    auto& s = t->shards[pos];
    if (!s.addressable || owner[pos] != pos) continue;  // each process draws its own shards, each buffer once
    Device const& exec = device(s.device);
    visit(dtype, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!FloatingElement<T>) {
        throw Error(std::format("random: draws are floating (float32, float64, bfloat16, float16), not {}", name(dtype)));
      } else {
        fill_shard(exec, reinterpret_cast<T*>(s.bytes.data()), s.index, shape, key, dist,
                   static_cast<compute_t<T>>(minval), static_cast<compute_t<T>>(maxval));
      }
    });
  }
  tessel::detail::wait_for_buffer_writers(*t);
  return t;
}

}  // namespace detail
}  // namespace tessel::random
