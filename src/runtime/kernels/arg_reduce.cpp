// argmax / argmin: each device's first best (value, index) over its block.
#include "kernel.hpp"

#include <cmath>
#include <format>
#include <cstdint>
#include <limits>

#include "tessel/core/error.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/launch.hpp"

namespace tessel::detail {

// Where a device's value is not the group's winner, its index becomes INT32_MAX: then the minimum
// over the group is the first index of the winner. (Outside the unnamed namespace, as nvcc wants an
// enclosing function of a device lambda to be.)
std::shared_ptr<TensorImpl> mask_losers(TensorImpl const& index, TensorImpl const& value, TensorImpl const& winner,
                                        char const* label);

namespace {

template <class T>
KOKKOS_INLINE_FUNCTION bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}

// Does v beat the best so far (jnp.argmax's order: NaN above all; ties do not beat)?
template <bool Max, class T>
KOKKOS_INLINE_FUNCTION bool beats(T v, T best) {
  if (is_nan(best)) return false;
  if (is_nan(v)) return true;
  return Max ? v > best : v < best;
}


struct Dims {
  int rank = 0;
  std::int64_t local[max_rank]{}, start[max_rank]{}, global[max_rank]{};
  bool reduced[max_rank]{};
};

template <bool Max, class T>
void blocks(TensorImpl const& in, Dims dims, TensorImpl& index, TensorImpl& value, char const* label) {
  using C = compute_t<T>;  // 16-bit floats compare as the floats they are
  // What a device whose block is empty along the reduced axes (past an uneven end) offers: a value
  // every element beats or ties, under an index every real one undercuts.
  C const none = Max ? std::numeric_limits<C>::lowest() : std::numeric_limits<C>::max();
  C const nowhere_value = std::numeric_limits<C>::has_infinity ? (Max ? -std::numeric_limits<C>::infinity()
                                                                      : std::numeric_limits<C>::infinity())
                                                               : none;
  for (std::size_t pos : local_positions(in)) {
    Dims d = dims;
    for (int k = 0; k < d.rank; ++k) {
      d.start[k] = in.shards[pos].index[static_cast<std::size_t>(k)].start;
      d.local[k] = in.shards[pos].index[static_cast<std::size_t>(k)].size();
    }
    std::int64_t outputs = 1, per = 1;
    for (int k = 0; k < d.rank; ++k) (d.reduced[k] ? per : outputs) *= d.local[k];
    T const* src = reinterpret_cast<T const*>(in.shards[pos].bytes.data());
    auto* idx = reinterpret_cast<std::int32_t*>(index.shards[pos].bytes.data());
    T* val = reinterpret_cast<T*>(value.shards[pos].bytes.data());
    for_each_index(device(in.shards[pos].device), label, outputs, outputs * per, KOKKOS_LAMBDA(std::int64_t o) {
      C best{};
      std::int64_t best_index = -1;
      for (std::int64_t r = 0; r < per; ++r) {
        // Local coordinates of (o, r): o over the kept dimensions, r over the reduced ones, each
        // row-major; the element's offset, and its global index over the reduced dimensions.
        std::int64_t ko = o, kr = r, offset = 0, stride = 1, flat = 0, flat_stride = 1;
        for (int k = d.rank; k-- > 0;) {
          std::int64_t c;
          if (d.reduced[k]) {
            c = kr % d.local[k];
            kr /= d.local[k];
            flat += (c + d.start[k]) * flat_stride;
            flat_stride *= d.global[k];
          } else {
            c = ko % d.local[k];
            ko /= d.local[k];
          }
          offset += c * stride;
          stride *= d.local[k];
        }
        C v = C(src[offset]);
        if (best_index < 0 || beats<Max>(v, best)) {
          best = v;
          best_index = flat;
        }
      }
      if (best_index < 0) {
        best = nowhere_value;
        best_index = std::numeric_limits<std::int32_t>::max();
      }
      idx[o] = static_cast<std::int32_t>(best_index);
      val[o] = T(best);
    });
  }
}

// Each device's first best element of its block over `axes` (jnp.argmax's rules: NaN wins, ties go
// to the first index): `index` (int32, global indices along the reduced dimensions, flattened
// row-major) and `value` (the input's dtype), both of the partial sharding given.
void arg_reduce_blocks(TensorImpl const& in, FixedVector<std::uint8_t, max_rank> const& axes, bool max,
                       TensorImpl& index, TensorImpl& value, char const* label) {
  Dims d;
  d.rank = static_cast<int>(in.shape.size());
  for (int k = 0; k < d.rank; ++k) d.global[k] = in.shape[static_cast<std::size_t>(k)];
  for (auto a : axes) d.reduced[a] = true;
  std::int64_t count = 1;
  for (auto a : axes) count *= in.shape[a];
  if (count == 0) throw Error(std::format("{}: attempt to get the index of an empty array of shape {}", max ? "argmax" : "argmin", to_string(in.shape)));
  visit(in.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (max) blocks<true, T>(in, d, index, value, label);
    else blocks<false, T>(in, d, index, value, label);
  });
}

}  // namespace

// The kernel step: each device's indices in the step's slot, and the values beside them
// (RunState::paired), which the all-reduce over a split axis needs. The collective step: the winning
// values, then the first index among the devices holding them.
void arg_reduce_kernel(plan::Plan const& plan, plan::Step const& step, RunState& state) {
  KernelArgs const k{plan, step, state};
  ImplPtr& values = state.paired[static_cast<std::size_t>(step.node)];
  if (step.kind == plan::StepKind::collective) {
    ImplPtr winner = complete_reduce(values, step.collective, *step.to, step.axes, step.combine);
    auto masked = mask_losers(*k.operand(0), *values, *winner, k.label());
    k.result(complete_reduce(masked, step.collective, *step.to, step.axes, ReduceOp::min));
    values = std::move(winner);
    return;
  }
  auto const& n = k.node();
  NamedSharding const& partial = *k.node_plan().partial;
  auto index = TensorImpl::allocate(n.shape, DType::int32, partial);
  auto value = TensorImpl::allocate(n.shape, k.operand(0)->dtype, partial);
  arg_reduce_blocks(*k.operand(0), n.axes, n.combine == ReduceOp::max, *index, *value, k.label());
  values = std::move(value);
  k.result(std::move(index));
}

// One block's mask. (A function of its own, not in mask_losers' generic lambda: nvcc defines no
// device lambda inside a generic lambda.)
template <class T>
void mask_block(Device const& exec, char const* label, std::int64_t n, std::int32_t const* idx, T const* val,
                T const* win, std::int32_t* o) {
  using C = compute_t<T>;
  for_each_index(exec, label, n, n, KOKKOS_LAMBDA(std::int64_t k) {
    C const v = C(val[k]), w = C(win[k]);
    bool wins = v == w || (is_nan(v) && is_nan(w));
    o[k] = wins ? idx[k] : std::numeric_limits<std::int32_t>::max();
  });
}

std::shared_ptr<TensorImpl> mask_losers(TensorImpl const& index, TensorImpl const& value, TensorImpl const& winner,
                                        char const* label) {
  auto out = TensorImpl::allocate(index.shape, DType::int32, index.sharding);
  visit(value.dtype, [&](auto tag) {
    using T = decltype(tag);
    for (std::size_t pos : local_positions(*out))
      mask_block(device(out->shards[pos].device), label,
                 static_cast<std::int64_t>(out->shards[pos].bytes.size() / sizeof(std::int32_t)),
                 reinterpret_cast<std::int32_t const*>(index.shards[pos].bytes.data()),
                 reinterpret_cast<T const*>(value.shards[pos].bytes.data()),
                 reinterpret_cast<T const*>(winner.shards[pos].bytes.data()),
                 reinterpret_cast<std::int32_t*>(out->shards[pos].bytes.data()));
  });
  return out;
}

}  // namespace tessel::detail
