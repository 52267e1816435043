// In-process collectives: every logical device's memory is addressable from every device's
// execution space (one host, or one GPU split into logical devices), so a collective is a kernel
// that reads all members' buffers. Members are combined in a fixed order, so results are
// deterministic and independent of timing.
#include <format>

#include "tessel/core/error.hpp"
#include "tessel/runtime/collectives.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/run_plan.hpp"

namespace tessel {
namespace {

constexpr int max_group = 64;

template <class T>
struct Sources {
  T const* ptr[max_group];
  int n;
};

template <class T>
KOKKOS_INLINE_FUNCTION T combine(ReduceOp op, T a, T b) {
  switch (op) {
    case ReduceOp::sum: return a + b;
    case ReduceOp::prod: return a * b;
    case ReduceOp::max: return a > b ? a : b;
    case ReduceOp::min: return a < b ? a : b;
  }
  return a;
}

// out[region] = combine over sources of src[region], with src holding `held` and out `out_box`.
template <class T>
void combine_region(ExecSpace const& exec, ReduceOp op, Sources<T> src, Box const& held, T* out, Box const& out_box,
                    Box const& region) {
  detail::RunPlan p = detail::plan_runs(held, out_box, region);
  std::int64_t chunks = (p.run_length + detail::run_chunk - 1) / detail::run_chunk;
  Kokkos::parallel_for(
      "tessel::collective", Kokkos::RangePolicy<ExecSpace>(exec, 0, p.runs * chunks), KOKKOS_LAMBDA(std::int64_t item) {
        std::int64_t s, d;
        detail::run_offsets(p, item / chunks, s, d);
        std::int64_t begin = (item % chunks) * detail::run_chunk;
        std::int64_t end = begin + detail::run_chunk < p.run_length ? begin + detail::run_chunk : p.run_length;
        for (std::int64_t e = begin; e < end; ++e) {
          T acc = src.ptr[0][s + e];
          for (int k = 1; k < src.n; ++k) acc = combine(op, acc, src.ptr[k][s + e]);
          out[d + e] = acc;
        }
      });
}

template <class T>
Sources<T> sources(std::span<GroupMember const> group) {
  if (group.size() > max_group)
    throw Error(std::format("in-process collectives support groups of at most {} devices, got {}", max_group, group.size()));
  Sources<T> s{};
  s.n = static_cast<int>(group.size());
  for (std::size_t k = 0; k < group.size(); ++k) s.ptr[k] = reinterpret_cast<T const*>(group[k].in);
  return s;
}

template <class F>
void with_type(DType dtype, F&& f) {
  switch (dtype) {
    case DType::float32: f(float{}); break;
    case DType::float64: f(double{}); break;
    case DType::int32: f(std::int32_t{}); break;
  }
}

class InProcess final : public Collectives {
 public:
  [[nodiscard]] char const* name() const override { return "in-process"; }

  void all_reduce(DType dtype, ReduceOp op, std::span<GroupMember const> group, Box const& held) override {
    with_type(dtype, [&]<class T>(T) {
      auto src = sources<T>(group);
      // Every member computes the whole result from all inputs: no member waits for another's
      // output, and the combination order is the same everywhere.
      for (auto const& m : group)
        combine_region(device(m.device).exec, op, src, held, reinterpret_cast<T*>(m.out), held, held);
    });
    fence_all_devices();
  }

  void reduce_scatter(DType dtype, ReduceOp op, std::span<GroupMember const> group, Box const& held,
                      std::span<Box const> pieces) override {
    with_type(dtype, [&]<class T>(T) {
      auto src = sources<T>(group);
      for (std::size_t k = 0; k < group.size(); ++k)
        combine_region(device(group[k].device).exec, op, src, held, reinterpret_cast<T*>(group[k].out), pieces[k],
                       pieces[k]);
    });
    fence_all_devices();
  }
};

}  // namespace

Collectives& in_process_collectives() {
  static InProcess c;
  return c;
}

}  // namespace tessel
