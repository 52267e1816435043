#include "tessel/runtime/block_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <format>

#include "tessel/runtime/backend/copy_shape.hpp"
#include "tessel/runtime/capture.hpp"
#include "tessel/runtime/launch.hpp"

namespace tessel::detail {
namespace {

using Task = CopyBatch::Task;

// On a host, a work item copies short runs (shorter than a chunk) several at a time, four streams
// at once: a strided box (a transpose's 4 KB runs) then copies at about the speed of a contiguous
// one instead of waiting on every run's first cache misses.
constexpr int runs_at_once = 4;

// Small batches (copy_region's, most collectives') travel inside the kernel's arguments; larger
// ones in device tables.
constexpr int inline_tasks = 8, inline_dsts = 16;
struct InlineTables {
  Task task[inline_tasks];
  std::byte* dst[inline_dsts];
  KOKKOS_INLINE_FUNCTION Task const& tasks(int i) const { return task[i]; }
  KOKKOS_INLINE_FUNCTION std::byte* dsts(int i) const { return dst[i]; }
};
struct DstPtr {  // a struct, so that a View of them is rank 1
  std::byte* p;
};
template <class Mem>
struct ViewTables {
  Kokkos::View<Task*, Mem> task;
  Kokkos::View<DstPtr*, Mem> dst;
  KOKKOS_INLINE_FUNCTION Task const& tasks(int i) const { return task(i); }
  KOKKOS_INLINE_FUNCTION std::byte* dsts(int i) const { return dst(i).p; }
};

// Work item `item` of a batch: a chunk of one run, or a group of short runs, for every destination,
// copied in the shape `Copies` of the space it runs on.
template <class W, class Copies, class Tables>
KOKKOS_INLINE_FUNCTION void copy_item(Tables const& tables, int num_tasks, std::int64_t item, bool stream) {
  int lo = 0, hi = num_tasks - 1;  // the last task that starts at or before `item`
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (tables.tasks(mid).first_item <= item) lo = mid;
    else hi = mid - 1;
  }
  Task const& t = tables.tasks(lo);
  std::int64_t local = item - t.first_item;
  W const* src = reinterpret_cast<W const*>(t.src);
  std::int64_t const chunk = t.chunk;
  if (t.runs_per_item == 1) {  // one run, or one chunk of a long run
    std::int64_t s, d;
    run_offsets(t.plan, local / t.chunks, s, d);
    std::int64_t begin = (local % t.chunks) * chunk;
    std::int64_t len = begin + chunk < t.plan.run_length ? chunk : t.plan.run_length - begin;
    for (int k = 0; k < t.num_dst; ++k)
      Copies::words(reinterpret_cast<W*>(tables.dsts(t.first_dst + k)) + d + begin, src + s + begin, len, stream);
    Copies::done(stream);
    return;
  }
  std::int64_t first = local * t.runs_per_item;
  std::int64_t last = first + t.runs_per_item < t.plan.runs ? first + t.runs_per_item : t.plan.runs;
  std::int64_t len = t.plan.run_length;
  for (std::int64_t r = first; r < last; r += runs_at_once) {
    std::int64_t s[runs_at_once], d[runs_at_once];
    int n = last - r < runs_at_once ? static_cast<int>(last - r) : runs_at_once;
    for (int i = 0; i < n; ++i) run_offsets(t.plan, r + i, s[i], d[i]);
    // The next group's runs start on pages the hardware prefetcher has not seen: ask for their
    // first lines now, while this group copies.
    for (std::int64_t q = r + runs_at_once; q < last && q < r + 2 * runs_at_once; ++q) {
      std::int64_t ns, nd;
      run_offsets(t.plan, q, ns, nd);
      auto const* line = reinterpret_cast<char const*>(src + ns);
      for (int l = 0; l < 4; ++l) backend::prefetch(line + 64 * l);
    }
    for (int k = 0; k < t.num_dst; ++k) {
      W* dst = reinterpret_cast<W*>(tables.dsts(t.first_dst + k));
      if (n == runs_at_once) {
        W* to[runs_at_once] = {dst + d[0], dst + d[1], dst + d[2], dst + d[3]};
        W const* from[runs_at_once] = {src + s[0], src + s[1], src + s[2], src + s[3]};
        Copies::words_4(to, from, len, stream);
      } else {
        for (int i = 0; i < n; ++i) Copies::words(dst + d[i], src + s[i], len, stream);
      }
    }
  }
  Copies::done(stream);
}

template <class W, class Exec, class Tables>
void launch_items(Exec const& exec, char const* label, Tables const& tables, int num_tasks, std::int64_t items,
                  std::int64_t elements, bool stream) {
  using Copies = backend::copies_on<Exec>;
  for_each_index_now(
      exec, label, items, elements,
      KOKKOS_LAMBDA(std::int64_t item) { copy_item<W, Copies>(tables, num_tasks, item, stream); });
}

// The work items of one task once cut: chunks of its long runs, or groups of its short runs.
std::int64_t task_items(Task const& t) {
  return t.chunks == 1 ? (t.plan.runs + t.runs_per_item - 1) / t.runs_per_item : t.plan.runs * t.chunks;
}

// The batch's tasks cut into work items of `chunk` elements (the copy shape of the space that will
// run them): long runs in chunks, short runs several to an item. Done when the batch is launched.
void cut_into_items(std::span<Task> tasks, std::int64_t chunk) {
  std::int64_t items = 0;
  for (Task& t : tasks) {
    t.chunk = chunk;
    t.chunks = (t.plan.run_length + chunk - 1) / chunk;
    t.runs_per_item = t.chunks == 1 ? std::max<std::int64_t>(1, chunk / t.plan.run_length) : 1;
    t.first_item = items;
    items += task_items(t);
  }
}

template <class T, class Exec, class S>
Kokkos::View<T*, typename Exec::memory_space> table(Exec const& exec, std::span<S const> v) {
  // (on the instance's unit: its GPU, where devices are spread over several)
  Kokkos::View<T*, typename Exec::memory_space> d(
      Kokkos::view_alloc(exec, Kokkos::WithoutInitializing, "tessel::copy_tasks"), v.size());
  auto h = Kokkos::create_mirror_view(d);
  for (std::size_t i = 0; i < v.size(); ++i) h(i) = T{v[i]};
  Kokkos::deep_copy(exec, d, h);
  if (h.data() != d.data()) exec.fence();  // `h` goes away on return
  return d;
}

template <class W, class Exec>
void launch_words(Exec const& exec, char const* label, CopyBatch const& batch) {
  auto tasks = batch.tasks();
  if (tasks.front().chunk != backend::copies_on<Exec>::chunk)
    Kokkos::abort("tessel::CopyBatch: internal error: a batch cut into work items for another execution space");
  std::int64_t const items = tasks.back().first_item + task_items(tasks.back());
  auto dsts = batch.destinations();
  std::int64_t elements = 0;  // written, all destinations together
  for (auto const& t : tasks) elements += t.plan.runs * t.plan.run_length * t.num_dst;
  bool const stream = backend::copies_on<Exec>::streams(
      std::max(static_cast<std::size_t>(elements) * sizeof(W), batch.operation_bytes()));
  int const n = static_cast<int>(tasks.size());
  if (tasks.size() <= inline_tasks && dsts.size() <= inline_dsts) {
    InlineTables t{};
    std::copy(tasks.begin(), tasks.end(), t.task);
    std::copy(dsts.begin(), dsts.end(), t.dst);
    launch_items<W>(exec, label, t, n, items, elements, stream);
  } else {
    // (the tables go to the device through host memory, which a graph's replay would read again)
    if (capture_number() != 0)
      return break_capture(std::format("a copy of {} regions into {} buffers (its tables go through host memory)",
                                       tasks.size(), dsts.size()));
    ViewTables<typename Exec::memory_space> t{table<Task>(exec, tasks), table<DstPtr>(exec, dsts)};
    launch_items<W>(exec, label, t, n, items, elements, stream);
  }
}

template <class Exec>
void launch_batch(Exec const& exec, char const* label, CopyBatch const& batch, std::size_t element_size) {
  if (element_size == 8) launch_words<std::uint64_t>(exec, label, batch);
  else if (element_size == 4) launch_words<std::uint32_t>(exec, label, batch);
  else if (element_size == 2) launch_words<std::uint16_t>(exec, label, batch);
  else if (element_size == 1) launch_words<std::uint8_t>(exec, label, batch);
  else Kokkos::abort("tessel::CopyBatch: element size must be 1, 2, 4 or 8");
}

}  // namespace

void CopyBatch::add(std::byte const* src, Box const& src_box, Box const& dst_box, Box const& region,
                    std::span<std::byte* const> dsts) {
  if (region.empty() || dsts.empty()) return;
  Task t{};
  t.plan = plan_runs(src_box, dst_box, region);
  t.src = src;
  t.first_dst = static_cast<int>(dsts_.size());
  t.num_dst = static_cast<int>(dsts.size());
  dsts_.insert(dsts_.end(), dsts.begin(), dsts.end());
  tasks_.push_back(t);
}

void CopyBatch::clear() {
  tasks_.clear();
  dsts_.clear();
  operation_bytes_ = 0;
}

void CopyBatch::launch(Device const& d, std::size_t element_size) {
  if (tasks_.empty()) return clear();
  cut_into_items(tasks_, backend::copies_on<ExecSpace>::chunk);
  CopyBatch batch;  // (the queued work keeps the tables; this one starts a new batch)
  std::swap(batch, *this);
  enqueue(d, kernel_label("tessel::copy"), [batch = std::move(batch), element_size](ExecSpace const& exec, char const* name) {
    launch_batch(exec, name, batch, element_size);
  });
}

void CopyBatch::run(HostExecSpace const& host, std::size_t element_size) {
  if (!tasks_.empty()) {
    cut_into_items(tasks_, backend::copies_on<HostExecSpace>::chunk);
    launch_batch(host, kernel_label("tessel::copy"), *this, element_size);
  }
  clear();
}

void copy_region(Device const& d, std::byte const* src, Box const& src_box, std::byte* dst, Box const& dst_box,
                 Box const& region, std::size_t element_size) {
  CopyBatch batch;
  std::byte* dsts[] = {dst};
  batch.add(src, src_box, dst_box, region, dsts);
  batch.launch(d, element_size);
}

void copy_bytes(Device const& d, std::byte* dst, std::byte const* src, std::size_t n) {
  if (n == 0) return;
  enqueue(d, kernel_label("tessel::copy"), [dst, src, n](ExecSpace const& exec, char const*) {
    Kokkos::deep_copy(exec, Kokkos::View<std::byte*, MemSpace, Kokkos::MemoryUnmanaged>(dst, n),
                      Kokkos::View<std::byte const*, MemSpace, Kokkos::MemoryUnmanaged>(src, n));
  });
}

void fill_bytes(Device const& d, std::byte* dst, std::size_t n, std::byte value) {
  if (n == 0) return;
  enqueue(d, kernel_label("tessel::fill"), [dst, n, value](ExecSpace const& exec, char const*) {
    Kokkos::View<std::byte*, MemSpace, Kokkos::MemoryUnmanaged> view(dst, n);
    Kokkos::deep_copy(exec, view, value);
  });
}

void copy_region(HostExecSpace const& host, std::byte const* src, Box const& src_box, std::byte* dst, Box const& dst_box,
                 Box const& region, std::size_t element_size) {
  CopyBatch batch;
  std::byte* dsts[] = {dst};
  batch.add(src, src_box, dst_box, region, dsts);
  batch.run(host, element_size);
}

}  // namespace tessel::detail
