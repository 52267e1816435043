// The parts the collectives across processes share (process_group.hpp).
#include "process_group.hpp"

#include <algorithm>
#include <format>
#include <map>
#include <memory>
#include <utility>

#include "tessel/core/error.hpp"
#include "tessel/runtime/backend/devices.hpp"
#include "tessel/runtime/block_copy.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/distributed.hpp"
#include "tessel/runtime/run_plan.hpp"
#include "tessel/runtime/stream.hpp"

namespace tessel::across {

void fence_members(std::span<GroupMember const> group) {
  std::vector<int> ids;
  for (auto const& m : group)
    if (is_local_device(m.device) && std::find(ids.begin(), ids.end(), m.device) == ids.end()) ids.push_back(m.device);
  detail::fence_devices(ids);
}

bool all_local(std::span<GroupMember const> group) {
  return std::all_of(group.begin(), group.end(), [](GroupMember const& m) { return is_local_device(m.device); });
}

int process_of(GroupMember const& m) { return distributed::process_of(m.device); }

std::byte* scratch(int device, std::size_t slot, std::size_t bytes) {
  struct Free {
    int unit;
    std::size_t bytes;
    void operator()(std::byte* p) const noexcept { backend::free_device_bytes(unit, p, bytes); }
  };
  struct Buffer {
    std::unique_ptr<std::byte, Free> data{nullptr, Free{0, 0}};
    std::size_t bytes = 0;
  };
  static std::map<std::pair<int, std::size_t>, Buffer> buffers;  // by unit and slot
  ExecSpace const& exec = tessel::device(device).exec;
  int const unit = backend::unit_of(exec);
  auto& b = buffers[{unit, slot}];
  if (b.bytes < bytes) {
    b.data = std::unique_ptr<std::byte, Free>(static_cast<std::byte*>(backend::allocate_device_bytes(exec, bytes)),
                                              Free{unit, bytes});
    if (!b.data)
      throw OutOfMemory(std::format("a collective across processes could not allocate a {} byte receive buffer", bytes),
                        bytes);
    b.bytes = bytes;
  }
  return b.data.get();
}

std::size_t bytes_of(Box const& b, std::size_t element) { return static_cast<std::size_t>(b.num_elements()) * element; }

void copy_here(int device, std::byte const* src, Box const& src_box, std::byte* dst, Box const& dst_box,
               Box const& region, std::size_t element, std::size_t operation_bytes) {
  detail::CopyBatch batch;
  std::byte* dsts[] = {dst};
  batch.add(src, src_box, dst_box, region, dsts);
  batch.set_operation_bytes(operation_bytes);
  batch.launch(tessel::device(device), element);
}

GroupProcesses::GroupProcesses(char const* what, std::span<GroupMember const> group)
  : me(distributed::process_index()) {
  for (std::size_t k = 0; k < group.size(); ++k) {
    int id = group[k].device;
    if (id < 0 || id >= device_count())
      throw Error(std::format("{}: member {} names device {}, but there are {} devices (0..{}) over {} processes",
                              what, k, id, device_count(), device_count() - 1, distributed::process_count()));
    int p = distributed::process_of(id);
    processes.push_back(p);
    if (p == me) local.push_back(k);
  }
  std::sort(processes.begin(), processes.end());
  processes.erase(std::unique(processes.begin(), processes.end()), processes.end());
}

GroupMember const* GroupProcesses::first_output(std::span<GroupMember const> group) const {
  for (std::size_t k : local)
    if (group[k].out) return &group[k];
  return nullptr;
}

std::optional<Ranges> process_ranges(std::span<GroupMember const> group, std::span<Box const> pieces, Box const& whole,
                                     std::vector<int> const& processes) {
  struct Range {
    std::int64_t begin, end;
  };
  std::vector<std::vector<Range>> of(processes.size());
  for (std::size_t j = 0; j < group.size(); ++j) {
    if (pieces[j].empty()) continue;
    detail::RunPlan p = detail::plan_runs(whole, whole, pieces[j]);
    if (p.runs != 1) return std::nullopt;  // strided in the whole
    auto r = static_cast<std::size_t>(std::lower_bound(processes.begin(), processes.end(), process_of(group[j])) -
                                      processes.begin());
    of[r].push_back({p.src_base, p.src_base + p.run_length});
  }
  Ranges out;
  for (auto& list : of) {
    std::sort(list.begin(), list.end(), [](Range a, Range b) { return a.begin < b.begin; });
    for (std::size_t k = 1; k < list.size(); ++k)
      if (list[k].begin != list[k - 1].end) return std::nullopt;
    out.starts.push_back(list.empty() ? 0 : list.front().begin);
    out.counts.push_back(list.empty() ? 0 : list.back().end - list.front().begin);
  }
  return out;
}

}  // namespace tessel::across
