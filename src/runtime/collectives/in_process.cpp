// In-process collectives: every logical device's memory is addressable from every device's
// execution space (one host, one GPU split into logical devices, or GPUs that are peers:
// runtime/device_placement.hpp), so a collective is a set of kernels that read and write members'
// buffers directly. Members are combined in a fixed order, so
// results are deterministic and independent of timing.
//
// Each collective moves the least data it can: every input element is read once per output box
// that needs it, not once per member (all_reduce reduces each slice once and writes it to every
// member; all_gather reads each piece once and writes it to every member). Data movement is one
// kernel per device that receives (per device that sends, for all_gather) over a table of box
// copies; where every device shares one thread pool (a host), one kernel in all.
#include <algorithm>
#include <cstring>
#include <format>
#include <string>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/expr/xla_scalar.hpp"
#include "tessel/runtime/backend/copy_shape.hpp"
#include "tessel/runtime/backend/kernel_traits.hpp"
#include "tessel/runtime/collectives.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/launch.hpp"
#include "tessel/runtime/run_plan.hpp"
#include "tessel/runtime/stream.hpp"
#include "tessel/runtime/block_copy.hpp"
#include "checks.hpp"

namespace tessel {
namespace {

using namespace detail;  // the argument checks (checks.hpp)

constexpr int max_group = 64;

template <class T>
struct Pointers {
  T* ptr[max_group];
  int n;
};


// acc[e] (= the first source's element when `first`) combined with sources p[0..K) in order, for
// e < len at offset `off`. All K sources are read in one pass, so a thread keeps K memory streams
// in flight (combining one source at a time runs at about half the bandwidth on a host).
template <class T, ReduceOp Op, int K>
KOKKOS_INLINE_FUNCTION void accumulate(compute_t<T>* KOKKOS_RESTRICT acc, T const* const* p, std::int64_t off,
                                       std::int64_t len, bool first) {
  using C = compute_t<T>;  // 16-bit floats combine in float, in member order, rounded once at the end
  T const* q[K];
  for (int j = 0; j < K; ++j) q[j] = p[j] + off;
  if (first) {
    for (std::int64_t e = 0; e < len; ++e) {
      C a = C(q[0][e]);
      for (int j = 1; j < K; ++j) a = xla::combine<Op>(a, C(q[j][e]));
      acc[e] = a;
    }
  } else {
    for (std::int64_t e = 0; e < len; ++e) {
      C a = acc[e];
      for (int j = 0; j < K; ++j) a = xla::combine<Op>(a, C(q[j][e]));
      acc[e] = a;
    }
  }
}

constexpr int sources_per_pass = 8;

template <class T, ReduceOp Op>
KOKKOS_INLINE_FUNCTION void accumulate_pass(compute_t<T>* acc, T const* const* p, int k, std::int64_t off, std::int64_t len,
                                            bool first) {
  switch (k) {
    case 1: accumulate<T, Op, 1>(acc, p, off, len, first); break;
    case 2: accumulate<T, Op, 2>(acc, p, off, len, first); break;
    case 3: accumulate<T, Op, 3>(acc, p, off, len, first); break;
    case 4: accumulate<T, Op, 4>(acc, p, off, len, first); break;
    case 5: accumulate<T, Op, 5>(acc, p, off, len, first); break;
    case 6: accumulate<T, Op, 6>(acc, p, off, len, first); break;
    case 7: accumulate<T, Op, 7>(acc, p, off, len, first); break;
    default: accumulate<T, Op, sources_per_pass>(acc, p, off, len, first); break;
  }
}

// Elements a work item combines (backend::combine_tile): on a host, a tile in a local buffer, so
// that the loops over members vectorize; on a GPU, one element.
constexpr std::int64_t tile = backend::combine_tile;

// For work items [item_begin, item_end) of plan `p` (item = run * chunks + chunk, chunks of `tile`
// elements): combines the sources' elements (src layout) in source order and writes the result to
// every destination (dst layout).
template <class T, ReduceOp Op>
void combine_runs(Device const& dev, Pointers<T const> src, Pointers<T> dst, detail::RunPlan const& p,
                  std::int64_t item_begin, std::int64_t item_end) {
  if (item_end <= item_begin) return;
  std::int64_t chunks = (p.run_length + tile - 1) / tile;
  using Copies = backend::copies_on<ExecSpace>;
  bool const stream = Copies::streams(static_cast<std::size_t>(p.runs * p.run_length * dst.n) * sizeof(T));
  detail::enqueue(dev, detail::kernel_label("tessel::collective"), [=](ExecSpace const& exec, char const* label) {
  Kokkos::parallel_for(
      label, Kokkos::RangePolicy<ExecSpace>(exec, item_begin, item_end),
      KOKKOS_LAMBDA(std::int64_t item) {
        std::int64_t s, d;
        detail::run_offsets(p, item / chunks, s, d);
        std::int64_t begin = (item % chunks) * tile;
        s += begin;
        d += begin;
        std::int64_t len = begin + tile < p.run_length ? tile : p.run_length - begin;
        compute_t<T> acc[tile];
        for (int k = 0; k < src.n; k += sources_per_pass) {
          int pass = src.n - k < sources_per_pass ? src.n - k : sources_per_pass;
          accumulate_pass<T, Op>(acc, src.ptr + k, pass, s, len, k == 0);
        }
        // (named before the if constexpr: nvcc refuses a device lambda whose first use of a
        // captured variable is inside one)
        auto const& targets = dst;
        bool const streamed = stream;
        if constexpr (HalfFloat<T>) {
          T rounded[tile];
          for (std::int64_t e = 0; e < len; ++e) rounded[e] = T(acc[e]);
          for (int k = 0; k < targets.n; ++k) Copies::words(targets.ptr[k] + d, rounded, len, streamed);
        } else {
          for (int k = 0; k < targets.n; ++k) Copies::words(targets.ptr[k] + d, acc, len, streamed);
        }
        Copies::done(streamed);
      });
  });
}

std::int64_t num_items(detail::RunPlan const& p) { return p.runs * ((p.run_length + tile - 1) / tile); }

// Member k's slice of `items` work items split evenly over `n` members.
std::int64_t slice_begin(std::int64_t items, std::size_t k, std::size_t n) {
  return items * static_cast<std::int64_t>(k) / static_cast<std::int64_t>(n);
}

template <class T>
Pointers<T const> inputs(std::span<GroupMember const> group) {
  Pointers<T const> s{};
  s.n = static_cast<int>(group.size());
  for (std::size_t k = 0; k < group.size(); ++k) s.ptr[k] = reinterpret_cast<T const*>(group[k].in);
  return s;
}

// The devices of a group's members.
std::vector<int> devices_of(std::span<GroupMember const> group) {
  std::vector<int> ids;
  ids.reserve(group.size());
  for (auto const& m : group) ids.push_back(m.device);
  return ids;
}

// A collective's work reads every member's input and writes members' outputs, from the devices
// that run it (`workers`): each worker first waits for every member (runtime/stream.hpp), and
// every member waits for the workers after.
class GroupWork {
 public:
  // `every_member_works`: each member's device runs a part (reduce_scatter), whatever the backend;
  // otherwise the first member's runs all where the devices share one thread pool.
  explicit GroupWork(std::span<GroupMember const> group, bool every_member_works = false)
      : members_(devices_of(group)) {
    if (backend::one_kernel_for_all_devices && !every_member_works)
      workers_.assign(members_.begin(), members_.begin() + 1);
    else workers_ = members_;
    detail::wait_for_all(workers_, members_);
  }
  ~GroupWork() { detail::wait_for_all(members_, workers_); }
  GroupWork(GroupWork const&) = delete;
  GroupWork& operator=(GroupWork const&) = delete;

 private:
  std::vector<int> members_, workers_;
};

void check_group_size(char const* what, std::span<GroupMember const> group) {
  if (group.size() > max_group)
    throw Error(std::format("{}: in-process reductions support groups of at most {} devices, got {}", what, max_group,
                            group.size()));
}

class InProcess final : public Collectives {
 public:
  [[nodiscard]] char const* name() const override { return "in-process"; }

  void all_reduce(DType dtype, ReduceOp op, std::span<GroupMember const> group, Box const& held) override {
    check_group_size("all_reduce", group);
    check_devices(group);
    if (group.empty() || held.empty()) return;
    GroupWork const ordered(group);
    // Member k reduces the k-th slice of the box (all members' inputs, in member order) and writes
    // it to every member: each input is read once and each output written once. Where the devices
    // share one thread pool (backend::one_kernel_for_all_devices), one kernel does every slice.
    detail::RunPlan p = detail::plan_runs(held, held, held);
    std::int64_t items = num_items(p);
    visit(dtype, [&]<class T>(T) {
      auto src = inputs<T>(group);
      Pointers<T> dst{};
      for (std::size_t k = 0; k < group.size(); ++k)
        if (group[k].out) dst.ptr[dst.n++] = reinterpret_cast<T*>(group[k].out);
      visit(op, [&]<ReduceOp Op>() {
        if constexpr (backend::one_kernel_for_all_devices) {
          combine_runs<T, Op>(device(group[0].device), src, dst, p, 0, items);
        } else {
          for (std::size_t k = 0; k < group.size(); ++k)
            combine_runs<T, Op>(device(group[k].device), src, dst, p, slice_begin(items, k, group.size()),
                                slice_begin(items, k + 1, group.size()));
        }
      });
    });
  }

  void reduce_scatter(DType dtype, ReduceOp op, std::span<GroupMember const> group, Box const& held,
                      std::span<Box const> pieces) override {
    char const* what = "reduce_scatter";
    check_group_size(what, group);
    check_devices(group);
    check_count(what, "pieces", pieces.size(), group.size());
    check_ranks(what, "pieces", pieces, held.size());
    for (std::size_t k = 0; k < pieces.size(); ++k)
      if (!inside(pieces[k], held))
        throw Error(std::format("{}: pieces[{}] {} is not inside the reduced box {}", what, k, to_string(pieces[k]),
                                to_string(held)));
    if (group.empty()) return;
    GroupWork const ordered(group, true);  // (every member reduces its piece)
    visit(dtype, [&]<class T>(T) {
      auto src = inputs<T>(group);
      visit(op, [&]<ReduceOp Op>() {
        for (std::size_t k = 0; k < group.size(); ++k) {
          if (pieces[k].empty() || !group[k].out) continue;
          Pointers<T> dst{};
          dst.n = 1;
          dst.ptr[0] = reinterpret_cast<T*>(group[k].out);
          detail::RunPlan p = detail::plan_runs(held, pieces[k], pieces[k]);
          combine_runs<T, Op>(device(group[k].device), src, dst, p, 0, num_items(p));
        }
      });
    });
  }

  void all_gather(DType dtype, std::span<GroupMember const> group, std::span<Box const> pieces) override {
    char const* what = "all_gather";
    check_devices(group);
    check_count(what, "pieces", pieces.size(), group.size());
    if (group.empty()) return;
    check_ranks(what, "pieces", pieces, pieces[0].size());
    Box whole = tiled_union(pieces);
    if (whole.empty()) return;
    GroupWork const ordered(group);
    // Member j's piece is read once, a chunk at a time, and written into every member's `out`, on
    // member j's execution space (where the devices share one thread pool, all pieces in one kernel).
    std::vector<std::byte*> outs;
    for (auto const& m : group)
      if (m.out) outs.push_back(m.out);
    detail::CopyBatch batch;
    for (std::size_t j = 0; j < group.size(); ++j) {
      batch.add(group[j].in, pieces[j], whole, pieces[j], outs);
      if (!backend::one_kernel_for_all_devices) batch.launch(device(group[j].device), size_of(dtype));
    }
    batch.launch(device(group[0].device), size_of(dtype));
  }

  void all_to_all(DType dtype, std::span<GroupMember const> group, std::span<Box const> in_boxes,
                  std::span<Box const> out_boxes) override {
    char const* what = "all_to_all";
    check_devices(group);
    check_count(what, "in_boxes", in_boxes.size(), group.size());
    check_count(what, "out_boxes", out_boxes.size(), group.size());
    if (group.empty()) return;
    std::size_t rank = in_boxes[0].size();
    check_ranks(what, "in_boxes", in_boxes, rank);
    check_ranks(what, "out_boxes", out_boxes, rank);
    for (std::size_t k = 0; k < out_boxes.size(); ++k) check_covered_once(k, in_boxes, out_boxes[k]);
    GroupWork const ordered(group);
    // Member k assembles its out box from the parts of it every member holds, on its own
    // execution space (where the devices share one thread pool, all members in one kernel).
    detail::CopyBatch batch;
    for (std::size_t k = 0; k < group.size(); ++k) {
      if (!group[k].out) continue;
      std::byte* out[] = {group[k].out};
      for (std::size_t j = 0; j < group.size(); ++j)
        batch.add(group[j].in, in_boxes[j], out_boxes[k], intersect(out_boxes[k], in_boxes[j]), out);
      if (!backend::one_kernel_for_all_devices) batch.launch(device(group[k].device), size_of(dtype));
    }
    batch.launch(device(group[0].device), size_of(dtype));
  }

  void collective_permute(DType dtype, std::span<GroupMember const> group, std::span<Box const> in_boxes,
                          std::span<Box const> out_boxes, std::span<PermutePair const> pairs) override {
    char const* what = "collective_permute";
    check_devices(group);
    check_count(what, "in_boxes", in_boxes.size(), group.size());
    check_count(what, "out_boxes", out_boxes.size(), group.size());
    check_permute_pairs(in_boxes, out_boxes, pairs);
    if (group.empty()) return;
    GroupWork const ordered(group);
    // The target copies, on its execution space (where the devices share one thread pool, all pairs in one kernel): the
    // two buffers have the same row-major layout, so the source's box stands for both.
    detail::CopyBatch batch;
    for (auto [s, t] : pairs) {
      if (!group[static_cast<std::size_t>(t)].out) continue;
      Box const& from = in_boxes[static_cast<std::size_t>(s)];
      std::byte* out[] = {group[static_cast<std::size_t>(t)].out};
      batch.add(group[static_cast<std::size_t>(s)].in, from, from, from, out);
      if (!backend::one_kernel_for_all_devices) batch.launch(device(group[static_cast<std::size_t>(t)].device), size_of(dtype));
    }
    batch.launch(device(group[0].device), size_of(dtype));
  }

};

}  // namespace

Collectives& in_process_collectives() {
  static InProcess c;
  return c;
}

}  // namespace tessel
