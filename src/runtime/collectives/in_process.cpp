// In-process collectives: every logical device's memory is addressable from every device's
// execution space (one host, or one GPU split into logical devices), so a collective is a set of
// kernels that read and write members' buffers directly. Members are combined in a fixed order, so
// results are deterministic and independent of timing.
//
// Each collective moves the least data it can: every input element is read once per output box
// that needs it, not once per member (all_reduce reduces each slice once and writes it to every
// member; all_gather reads each piece once and writes it to every member). Data movement is one
// kernel per device that receives (per device that sends, for all_gather) over a table of box
// copies; on host backends, where every device shares one thread pool, one kernel in all.
#include <algorithm>
#include <cstring>
#include <format>
#include <string>
#include <vector>

#include "tessel/runtime/launch.hpp"
#include "tessel/core/error.hpp"
#include "tessel/expr/xla_scalar.hpp"
#include "tessel/runtime/collectives.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/run_plan.hpp"
#include "tessel/runtime/stream_copy.hpp"
#include "checks.hpp"

namespace tessel {
namespace {

using namespace detail;  // the argument checks (checks.hpp)

constexpr int max_group = 64;

// Elements a work item handles. On host backends a work item reduces a tile in a local buffer, so
// that the loops over members vectorize; on GPUs a work item is one element.
constexpr bool host_backend = Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;
constexpr std::int64_t tile = host_backend ? 4096 : 1;

// `stream`: with non-temporal stores on a host (stream_copy.hpp), for outputs too large to stay in
// cache; the work item calls stream_fence() after its last copy.
template <class W>
KOKKOS_INLINE_FUNCTION void copy_words(W* KOKKOS_RESTRICT dst, W const* KOKKOS_RESTRICT src, std::int64_t len,
                                       bool stream = false) {
  KOKKOS_IF_ON_HOST((if (stream) {
    detail::stream_copy(dst, src, len);
    return;
  }))
  (void)stream;
  for (std::int64_t e = 0; e < len; ++e) dst[e] = src[e];
}

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

// For work items [item_begin, item_end) of plan `p` (item = run * chunks + chunk, chunks of `tile`
// elements): combines the sources' elements (src layout) in source order and writes the result to
// every destination (dst layout).
template <class T, ReduceOp Op>
void combine_runs(ExecSpace const& exec, Pointers<T const> src, Pointers<T> dst, detail::RunPlan const& p,
                  std::int64_t item_begin, std::int64_t item_end) {
  if (item_end <= item_begin) return;
  std::int64_t chunks = (p.run_length + tile - 1) / tile;
  bool const stream =
      host_backend && static_cast<std::size_t>(p.runs * p.run_length * dst.n) * sizeof(T) >= detail::stream_output_bytes;
  Kokkos::parallel_for(
      detail::kernel_label("tessel::collective"), Kokkos::RangePolicy<ExecSpace>(exec, item_begin, item_end),
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
          for (int k = 0; k < targets.n; ++k) copy_words(targets.ptr[k] + d, rounded, len, streamed);
        } else {
          for (int k = 0; k < targets.n; ++k) copy_words(targets.ptr[k] + d, acc, len, streamed);
        }
        KOKKOS_IF_ON_HOST((if (stream) detail::stream_fence();))
      });
}

std::int64_t num_items(detail::RunPlan const& p) { return p.runs * ((p.run_length + tile - 1) / tile); }

// ---- box copies, batched ----

// Elements per work item of a copy: a host thread copies a chunk (reused from cache for every
// destination); a GPU thread one element.
constexpr std::int64_t copy_chunk = host_backend ? detail::run_chunk : 1;
// On a host, a work item copies short runs (shorter than a chunk) several at a time, four streams
// at once: a strided box (a transpose's 4 KB runs) then copies at about the speed of a contiguous
// one instead of waiting on every run's first cache misses.
constexpr int runs_at_once = 4;

// A destination buffer (a struct, so that a View of them is rank 1).
struct DstPtr {
  std::byte* p;
};

// One source region copied to `num_dst` destinations that share one layout (dsts[first_dst...]).
struct CopyTask {
  detail::RunPlan plan;
  std::byte const* src;
  int first_dst, num_dst;
  std::int64_t chunks;         // work items per run (long runs), or 1
  std::int64_t runs_per_item;  // runs per work item (short runs), or 1
  std::int64_t first_item;     // work items of the tasks before this one
};

// Four runs copied together. On a host, in interleaved 256-byte blocks (fixed-size copies the
// compiler inlines as vector moves), so that the four streams are in flight at once; a plain loop
// would be turned into four library calls, one run after the other.
template <class W>
KOKKOS_INLINE_FUNCTION void copy_words_4(W* const* dst, W const* const* src, std::int64_t len, bool stream) {
  std::int64_t e = 0;
  KOKKOS_IF_ON_HOST((constexpr std::int64_t block = 256 / sizeof(W); for (; e + block <= len; e += block) {
    for (int i = 0; i < 4; ++i) {
      if (stream) detail::stream_copy(dst[i] + e, src[i] + e, block);
      else std::memcpy(dst[i] + e, src[i] + e, block * sizeof(W));
    }
  }))
  for (int i = 0; i < 4; ++i) copy_words(dst[i] + e, src[i] + e, len - e, stream);
}

class CopyBatch {
 public:
  void add(std::byte const* src, Box const& src_box, Box const& dst_box, Box const& region,
           std::span<std::byte* const> dsts) {
    if (region.empty() || dsts.empty()) return;
    CopyTask t{};
    t.plan = detail::plan_runs(src_box, dst_box, region);
    t.src = src;
    t.first_dst = static_cast<int>(dsts_.size());
    t.num_dst = static_cast<int>(dsts.size());
    t.chunks = (t.plan.run_length + copy_chunk - 1) / copy_chunk;
    t.runs_per_item = t.chunks == 1 ? std::max<std::int64_t>(1, copy_chunk / t.plan.run_length) : 1;
    t.first_item = items_;
    items_ += t.chunks == 1 ? (t.plan.runs + t.runs_per_item - 1) / t.runs_per_item : t.plan.runs * t.chunks;
    for (std::byte* d : dsts) dsts_.push_back({d});
    tasks_.push_back(t);
  }

  // Enqueues the copies on `exec` and starts a new batch (the kernel holds its own tables). The
  // copies move bits as unsigned words of the element size and never look at values.
  void launch(ExecSpace const& exec, std::size_t element_size) {
    if (tasks_.empty()) return;
    if (element_size == 8) launch_words<std::uint64_t>(exec);
    else if (element_size == 2) launch_words<std::uint16_t>(exec);
    else if (element_size == 1) launch_words<std::uint8_t>(exec);
    else launch_words<std::uint32_t>(exec);
    tasks_.clear();
    dsts_.clear();
    items_ = 0;
  }

  // (Public only because CUDA refuses device lambdas in private member functions.)
  template <class T>
  static Kokkos::View<T*, MemSpace> to_device(ExecSpace const& exec, std::vector<T> const& v) {
    Kokkos::View<T*, MemSpace> d(Kokkos::view_alloc(Kokkos::WithoutInitializing, "tessel::copy_tasks"), v.size());
    auto h = Kokkos::create_mirror_view(d);
    std::copy(v.begin(), v.end(), h.data());
    Kokkos::deep_copy(exec, d, h);
    if constexpr (!host_backend) exec.fence();  // `h` goes away on return
    return d;
  }

  template <class W>
  void launch_words(ExecSpace const& exec) {
    auto tasks = to_device(exec, tasks_);
    auto dsts = to_device(exec, dsts_);
    int num_tasks = static_cast<int>(tasks_.size());
    std::size_t out_bytes = 0;
    for (auto const& t : tasks_)
      out_bytes += static_cast<std::size_t>(t.plan.runs * t.plan.run_length * t.num_dst) * sizeof(W);
    bool const stream = host_backend && out_bytes >= detail::stream_output_bytes;
    Kokkos::parallel_for(
        detail::kernel_label("tessel::collective_copy"), Kokkos::RangePolicy<ExecSpace>(exec, 0, items_), KOKKOS_LAMBDA(std::int64_t item) {
          int lo = 0, hi = num_tasks - 1;  // the last task that starts at or before `item`
          while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            if (tasks(mid).first_item <= item) lo = mid;
            else hi = mid - 1;
          }
          CopyTask const& t = tasks(lo);
          std::int64_t local = item - t.first_item;
          W const* src = reinterpret_cast<W const*>(t.src);
          if (t.runs_per_item == 1) {  // one run, or one chunk of a long run
            std::int64_t s, d;
            detail::run_offsets(t.plan, local / t.chunks, s, d);
            std::int64_t begin = (local % t.chunks) * copy_chunk;
            std::int64_t len = begin + copy_chunk < t.plan.run_length ? copy_chunk : t.plan.run_length - begin;
            for (int k = 0; k < t.num_dst; ++k)
              copy_words(reinterpret_cast<W*>(dsts(t.first_dst + k).p) + d + begin, src + s + begin, len, stream);
            KOKKOS_IF_ON_HOST((if (stream) detail::stream_fence();))
            return;
          }
          std::int64_t first = local * t.runs_per_item;
          std::int64_t last = first + t.runs_per_item < t.plan.runs ? first + t.runs_per_item : t.plan.runs;
          std::int64_t len = t.plan.run_length;
          for (std::int64_t r = first; r < last; r += runs_at_once) {
            std::int64_t s[runs_at_once], d[runs_at_once];
            int n = last - r < runs_at_once ? static_cast<int>(last - r) : runs_at_once;
            for (int i = 0; i < n; ++i) detail::run_offsets(t.plan, r + i, s[i], d[i]);
            // The next group's runs start on pages the hardware prefetcher has not seen: ask for
            // their first lines now, while this group copies.
            KOKKOS_IF_ON_HOST((for (std::int64_t q = r + runs_at_once; q < last && q < r + 2 * runs_at_once; ++q) {
              std::int64_t ns, nd;
              detail::run_offsets(t.plan, q, ns, nd);
              auto const* line = reinterpret_cast<char const*>(src + ns);
              for (int l = 0; l < 4; ++l) __builtin_prefetch(line + 64 * l);
            }))
            for (int k = 0; k < t.num_dst; ++k) {
              W* dst = reinterpret_cast<W*>(dsts(t.first_dst + k).p);
              if (n == runs_at_once) {
                W* to[runs_at_once] = {dst + d[0], dst + d[1], dst + d[2], dst + d[3]};
                W const* from[runs_at_once] = {src + s[0], src + s[1], src + s[2], src + s[3]};
                copy_words_4(to, from, len, stream);
              } else {
                for (int i = 0; i < n; ++i) copy_words(dst + d[i], src + s[i], len, stream);
              }
            }
          }
          KOKKOS_IF_ON_HOST((if (stream) detail::stream_fence();))
        });
  }

 private:
  std::vector<CopyTask> tasks_;
  std::vector<DstPtr> dsts_;
  std::int64_t items_ = 0;
};

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
    fence_all_devices();
    // Member k reduces the k-th slice of the box (all members' inputs, in member order) and writes
    // it to every member: each input is read once and each output written once. On host backends
    // one kernel does every slice (the devices share one thread pool).
    detail::RunPlan p = detail::plan_runs(held, held, held);
    std::int64_t items = num_items(p);
    visit(dtype, [&]<class T>(T) {
      auto src = inputs<T>(group);
      Pointers<T> dst{};
      for (std::size_t k = 0; k < group.size(); ++k)
        if (group[k].out) dst.ptr[dst.n++] = reinterpret_cast<T*>(group[k].out);
      visit(op, [&]<ReduceOp Op>() {
        if constexpr (host_backend) {
          combine_runs<T, Op>(device(group[0].device).exec, src, dst, p, 0, items);  // one thread pool
        } else {
          for (std::size_t k = 0; k < group.size(); ++k)
            combine_runs<T, Op>(device(group[k].device).exec, src, dst, p, slice_begin(items, k, group.size()),
                                slice_begin(items, k + 1, group.size()));
        }
      });
    });
    fence_all_devices();
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
    fence_all_devices();
    visit(dtype, [&]<class T>(T) {
      auto src = inputs<T>(group);
      visit(op, [&]<ReduceOp Op>() {
        for (std::size_t k = 0; k < group.size(); ++k) {
          if (pieces[k].empty() || !group[k].out) continue;
          Pointers<T> dst{};
          dst.n = 1;
          dst.ptr[0] = reinterpret_cast<T*>(group[k].out);
          detail::RunPlan p = detail::plan_runs(held, pieces[k], pieces[k]);
          combine_runs<T, Op>(device(group[k].device).exec, src, dst, p, 0, num_items(p));
        }
      });
    });
    fence_all_devices();
  }

  void all_gather(DType dtype, std::span<GroupMember const> group, std::span<Box const> pieces) override {
    char const* what = "all_gather";
    check_devices(group);
    check_count(what, "pieces", pieces.size(), group.size());
    if (group.empty()) return;
    check_ranks(what, "pieces", pieces, pieces[0].size());
    Box whole = tiled_union(pieces);
    if (whole.empty()) return;
    fence_all_devices();
    // Member j's piece is read once, a chunk at a time, and written into every member's `out`, on
    // member j's execution space (on host backends, all pieces in one kernel).
    std::vector<std::byte*> outs;
    for (auto const& m : group)
      if (m.out) outs.push_back(m.out);
    CopyBatch batch;
    for (std::size_t j = 0; j < group.size(); ++j) {
      batch.add(group[j].in, pieces[j], whole, pieces[j], outs);
      if (!host_backend) batch.launch(device(group[j].device).exec, size_of(dtype));
    }
    batch.launch(device(group[0].device).exec, size_of(dtype));
    fence_all_devices();
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
    fence_all_devices();
    // Member k assembles its out box from the parts of it every member holds, on its own
    // execution space (on host backends, all members in one kernel).
    CopyBatch batch;
    for (std::size_t k = 0; k < group.size(); ++k) {
      if (!group[k].out) continue;
      std::byte* out[] = {group[k].out};
      for (std::size_t j = 0; j < group.size(); ++j)
        batch.add(group[j].in, in_boxes[j], out_boxes[k], intersect(out_boxes[k], in_boxes[j]), out);
      if (!host_backend) batch.launch(device(group[k].device).exec, size_of(dtype));
    }
    batch.launch(device(group[0].device).exec, size_of(dtype));
    fence_all_devices();
  }

  void collective_permute(DType dtype, std::span<GroupMember const> group, std::span<Box const> in_boxes,
                          std::span<Box const> out_boxes, std::span<PermutePair const> pairs) override {
    char const* what = "collective_permute";
    check_devices(group);
    check_count(what, "in_boxes", in_boxes.size(), group.size());
    check_count(what, "out_boxes", out_boxes.size(), group.size());
    check_permute_pairs(in_boxes, out_boxes, pairs);
    fence_all_devices();
    // The target copies, on its execution space (on host backends, all pairs in one kernel): the
    // two buffers have the same row-major layout, so the source's box stands for both.
    CopyBatch batch;
    for (auto [s, t] : pairs) {
      if (!group[static_cast<std::size_t>(t)].out) continue;
      Box const& from = in_boxes[static_cast<std::size_t>(s)];
      std::byte* out[] = {group[static_cast<std::size_t>(t)].out};
      batch.add(group[static_cast<std::size_t>(s)].in, from, from, from, out);
      if (!host_backend) batch.launch(device(group[static_cast<std::size_t>(t)].device).exec, size_of(dtype));
    }
    if (!group.empty()) batch.launch(device(group[0].device).exec, size_of(dtype));
    fence_all_devices();
  }

};

}  // namespace

Collectives& in_process_collectives() {
  static InProcess c;
  return c;
}

}  // namespace tessel
