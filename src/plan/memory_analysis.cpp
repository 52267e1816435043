// memory_analysis (plan/memory_analysis.hpp): the plan's steps walked as the executor runs them,
// each value slot holding an allocation of the pool (or another's, for a view), live bytes summed
// per device.
#include "tessel/plan/memory_analysis.hpp"

#include <algorithm>
#include <format>

#include "tessel/core/buffer_bytes.hpp"
#include "tessel/plan/cost_analysis.hpp"
#include "tessel/plan/reshard.hpp"

namespace tessel::plan {

namespace {

// For each position, the position whose buffer it uses (itself when it owns one): the first
// position of the same unit with the same block, among those `may_share` allows.
template <class MayShare>
std::vector<std::size_t> owners(Shape const& shape, NamedSharding const& sharding, MemoryLayout const& layout,
                                MayShare const& may_share) {
  auto const& ids = sharding.mesh().device_ids();
  std::vector<std::size_t> owner(ids.size());
  std::vector<Box> boxes;
  boxes.reserve(ids.size());
  for (std::size_t p = 0; p < ids.size(); ++p) boxes.push_back(sharding.layout().box(shape, static_cast<int>(p)));
  for (std::size_t p = 0; p < ids.size(); ++p) {
    owner[p] = p;
    for (std::size_t q = 0; q < p; ++q)
      if (owner[q] == q && boxes[q] == boxes[p] && layout.unit_of(ids[q]) == layout.unit_of(ids[p]) && may_share(q, p)) {
        owner[p] = q;
        break;
      }
  }
  return owner;
}

// What the pool allocates for a tensor whose positions use their owners' buffers
// (core/buffer_bytes.hpp): per unit, one block of the owners' aligned shards, rounded.
ValueMemory memory_with_owners(Shape const& shape, int dtype_bytes, NamedSharding const& sharding,
                               MemoryLayout const& layout, std::vector<std::size_t> const& owner,
                               std::int64_t buffer_base) {
  auto const& ids = sharding.mesh().device_ids();
  ValueMemory m;
  int top = 0;
  for (int id : ids) top = std::max(top, id);
  m.bytes.assign(static_cast<std::size_t>(top) + 1, 0);
  m.buffer.resize(ids.size());
  struct Block {
    int unit;
    int first;  // its first owner's device
    std::size_t total = 0;
  };
  std::vector<Block> blocks;
  for (std::size_t p = 0; p < ids.size(); ++p) {
    m.buffer[p] = buffer_base + static_cast<std::int64_t>(owner[p]);
    if (owner[p] != p) continue;
    auto const bytes = static_cast<std::size_t>(sharding.shard_shape(shape, static_cast<int>(p)).num_elements()) *
                       static_cast<std::size_t>(dtype_bytes);
    std::size_t const aligned = aligned_shard_bytes(bytes);
    int const unit = layout.unit_of(ids[p]);
    auto b = std::find_if(blocks.begin(), blocks.end(), [&](Block const& x) { return x.unit == unit; });
    if (b == blocks.end()) b = blocks.insert(blocks.end(), Block{unit, ids[p]});
    b->total += aligned;
    m.bytes[static_cast<std::size_t>(ids[p])] += static_cast<std::int64_t>(aligned);
  }
  for (Block const& b : blocks)
    m.bytes[static_cast<std::size_t>(b.first)] += static_cast<std::int64_t>(pool_block_bytes(b.total) - b.total);
  return m;
}

// One allocation a slot may hold: the bytes each device holds of it, while anything refers to it.
struct Allocation {
  ValueMemory memory;
  std::string what;
  int refs = 0;
  bool input = false;  // held by the caller: never dropped by the plan
};

struct Walk {
  Plan const& plan;
  MemoryLayout const& layout;
  std::size_t device_slots;
  std::vector<Allocation> allocations;
  std::vector<int> slot;  // value slot -> allocation (-1: none yet)
  std::vector<std::optional<NamedSharding>> held;  // value slot -> its sharding
  std::vector<std::int64_t> live;

  void hold(int a) {
    auto& al = allocations[static_cast<std::size_t>(a)];
    if (al.refs++ > 0) return;
    for (std::size_t d = 0; d < al.memory.bytes.size(); ++d) live[d] += al.memory.bytes[d];
  }
  void drop(int a) {
    if (a < 0) return;
    auto& al = allocations[static_cast<std::size_t>(a)];
    if (--al.refs > 0 || al.input) return;
    for (std::size_t d = 0; d < al.memory.bytes.size(); ++d) live[d] -= al.memory.bytes[d];
  }
  int add(ValueMemory memory, std::string what, bool input) {
    memory.bytes.resize(device_slots, 0);
    for (auto& b : memory.buffer) b += static_cast<std::int64_t>(allocations.size()) << 20;  // (ids apart)
    allocations.push_back(Allocation{std::move(memory), std::move(what), 0, input});
    return static_cast<int>(allocations.size()) - 1;
  }
  void set_slot(int s, int a) {
    int const old = slot[static_cast<std::size_t>(s)];
    if (a >= 0) hold(a);
    slot[static_cast<std::size_t>(s)] = a;
    drop(old);
  }
};

// Whether a fused region's replicas at positions q and p read the same memory the same way, so
// that the runtime computes their block once (runtime/shared_buffers.hpp): every tensor operand of
// the step lies in one buffer at both.
bool reads_alike(Walk const& w, Step const& step, NamedSharding const& made, std::size_t q, std::size_t p) {
  for (int o : step.operands) {
    int const a = w.slot[static_cast<std::size_t>(o)];
    if (a < 0) continue;  // a scalar
    auto const& buffer = w.allocations[static_cast<std::size_t>(a)].memory.buffer;
    if (buffer.size() != made.mesh().device_ids().size() || buffer[q] != buffer[p]) return false;
  }
  return true;
}

}  // namespace

ValueMemory value_memory(Shape const& shape, int dtype_bytes, NamedSharding const& sharding,
                         MemoryLayout const& layout, bool replicas_share) {
  auto owner = owners(shape, sharding, layout, [&](std::size_t, std::size_t) { return replicas_share; });
  return memory_with_owners(shape, dtype_bytes, sharding, layout, owner, 0);
}

ValueMemory value_memory(Shape const& shape, int dtype_bytes, NamedSharding const& sharding,
                         MemoryLayout const& layout, std::vector<std::size_t> const& owner) {
  return memory_with_owners(shape, dtype_bytes, sharding, layout, owner, 0);
}

MemoryAnalysis memory_analysis(Plan const& plan, MemoryLayout const& layout,
                               std::span<std::optional<ValueMemory> const> arguments) {
  Graph const& g = plan.graph;
  // Every device id a value of the plan lives on.
  int top = 0;
  auto note_mesh = [&](std::optional<NamedSharding> const& s) {
    if (s)
      for (int id : s->mesh().device_ids()) top = std::max(top, id);
  };
  for (std::size_t i = 0; i < g.size(); ++i) {
    if (g[i].kind == NodeKind::tensor) note_mesh(g[i].sharding);
    note_mesh(plan.nodes[i].out);
    note_mesh(plan.nodes[i].partial);
    note_mesh(plan.nodes[i].after_collective);
  }
  for (Step const& st : plan.steps) note_mesh(st.to);
  auto const device_slots = static_cast<std::size_t>(top) + 1;
  std::vector<bool> used(device_slots, false);

  MemoryAnalysis m;
  std::vector<std::int64_t> peak(device_slots, 0), arguments_held(device_slots, 0);
  std::vector<int> peak_step(device_slots, -1);

  // Walks the steps up to `stop` (all: -1), keeping each device's peak; returns the walk's state.
  auto walk = [&](int stop) {
    std::size_t const slots = std::max(plan.slots, g.size());
    Walk w{plan, layout, device_slots, {}, std::vector<int>(slots, -1), std::vector<std::optional<NamedSharding>>(slots),
           std::vector<std::int64_t>(device_slots, 0)};
    for (std::size_t i = 0; i < g.size(); ++i) {
      if (g[i].kind != NodeKind::tensor || !g[i].sharding) continue;
      int const s = plan.slot[i];
      if (w.slot[static_cast<std::size_t>(s)] >= 0) continue;
      ValueMemory vm = i < arguments.size() && arguments[i]
                           ? *arguments[i]
                           : value_memory(g[i].shape, static_cast<int>(g[i].dtype_bytes), *g[i].sharding, layout, true);
      int const a = w.add(std::move(vm), std::format("argument (node {})", i), true);
      w.set_slot(s, a);
      w.held[static_cast<std::size_t>(s)] = g[i].sharding;
    }
    arguments_held = w.live;
    for (std::size_t d = 0; d < device_slots; ++d) {
      peak[d] = w.live[d];
      peak_step[d] = -1;
    }
    for (std::size_t k = 0; k < plan.steps.size() && static_cast<int>(k) != stop; ++k) {
      Step const& step = plan.steps[k];
      int const rs = result_slot(step);
      GraphNode const& n = g[static_cast<std::size_t>(step.node)];
      if (step.kind == StepKind::view) {  // the operand's memory, read as another shape
        if (!step.operands.empty()) w.set_slot(rs, w.slot[static_cast<std::size_t>(step.operands[0])]);
        w.held[static_cast<std::size_t>(rs)] = made_sharding(plan, step);
        continue;
      }
      if (step.kind == StepKind::exchange) continue;  // (in place: cumsum's carry)
      auto made = made_sharding(plan, step);
      if (!made) continue;
      bool const reduces = step.kind == StepKind::collective &&
                           (step.collective == Collective::all_reduce || step.collective == Collective::reduce_scatter);
      if ((step.kind == StepKind::reshard || (step.kind == StepKind::collective && !reduces && !step.by_op)) &&
          !step.operands.empty()) {
        // A sharding change where every device keeps its block keeps its buffers too
        // (detail::reshard_with_collectives).
        auto const from = static_cast<std::size_t>(step.operands[0]);
        auto const& source = w.held[from];
        if (source && w.slot[from] >= 0 && std::ranges::equal(source->mesh().device_ids(), made->mesh().device_ids()) &&
            decompose(n.shape, n.dtype_bytes, *source, *made).empty()) {
          w.set_slot(rs, w.slot[from]);
          w.held[static_cast<std::size_t>(rs)] = made;
          continue;
        }
      }
      std::vector<std::size_t> owner;
      if (step.kind == StepKind::collective && step.collective == Collective::all_reduce) {
        // Members of a group that share memory share the result's buffer (detail::complete_reduce).
        auto groups = step_groups(step);
        auto group_of = [&](std::size_t pos) {
          int const id = made->mesh().device_ids()[pos];
          for (std::size_t k2 = 0; k2 < groups.size(); ++k2)
            if (std::find(groups[k2].begin(), groups[k2].end(), id) != groups[k2].end()) return k2;
          return groups.size();
        };
        owner = owners(n.shape, *made, layout, [&](std::size_t q, std::size_t p) { return group_of(q) == group_of(p); });
      } else if (step.kind == StepKind::kernel && !step.by_op && n.kind != NodeKind::reduce) {
        owner = owners(n.shape, *made, layout, [&](std::size_t q, std::size_t p) { return reads_alike(w, step, *made, q, p); });
      } else {
        owner = owners(n.shape, *made, layout, [](std::size_t, std::size_t) { return false; });
      }
      ValueMemory vm = memory_with_owners(n.shape, static_cast<int>(n.dtype_bytes), *made, layout, owner, 0);
      int const a = w.add(std::move(vm), std::format("#{} {}", k, step.label), false);
      w.hold(a);  // (live with the value it replaces, as the executor's assignment has both)
      for (std::size_t d = 0; d < device_slots; ++d)
        if (w.live[d] > peak[d]) {
          peak[d] = w.live[d];
          peak_step[d] = static_cast<int>(k);
        }
      w.set_slot(rs, a);
      w.drop(a);
      w.held[static_cast<std::size_t>(rs)] = made;
    }
    return w;
  };

  Walk const all = walk(-1);
  for (auto const& al : all.allocations)
    for (std::size_t d = 0; d < device_slots; ++d) used[d] = used[d] || al.memory.bytes[d] != 0;
  int const result_allocation = plan.slot.empty() ? -1 : all.slot[static_cast<std::size_t>(plan.slot.back())];
  for (std::size_t d = 0; d < device_slots; ++d) {
    if (!used[d]) continue;
    DeviceMemory dm;
    dm.device = static_cast<int>(d);
    dm.argument_bytes = arguments_held[d];
    if (result_allocation >= 0 && !all.allocations[static_cast<std::size_t>(result_allocation)].input)
      dm.output_bytes = all.allocations[static_cast<std::size_t>(result_allocation)].memory.bytes[d];
    dm.peak_bytes = peak[d];
    dm.peak_step = peak_step[d];
    dm.temporary_bytes = std::max<std::int64_t>(0, dm.peak_bytes - dm.argument_bytes - dm.output_bytes);
    if (dm.peak_bytes > m.peak_bytes || m.device < 0) {
      m.device = dm.device;
      m.peak_bytes = dm.peak_bytes;
      m.peak_step = dm.peak_step;
    }
    m.devices.push_back(dm);
  }
  if (result_allocation >= 0) {
    auto const& r = all.allocations[static_cast<std::size_t>(result_allocation)];
    m.result = r.memory;
    if (r.input) {
      for (std::size_t i = 0; i < g.size(); ++i)
        if (g[i].kind == NodeKind::tensor && all.slot[static_cast<std::size_t>(plan.slot[i])] == result_allocation) {
          m.result_input = static_cast<int>(i);
          break;
        }
    }
  }
  if (m.device < 0) return m;
  if (m.peak_step >= 0) m.peak_label = std::format("#{} {}", m.peak_step, plan.steps[static_cast<std::size_t>(m.peak_step)].label);
  // What is live on that device just after its peak step: the walk again, up to it.
  Walk at = walk(m.peak_step + 1);
  auto const d = static_cast<std::size_t>(m.device);
  for (std::size_t a = 0; a < at.allocations.size(); ++a) {
    auto const& al = at.allocations[a];
    if (al.memory.bytes[d] > 0 && (al.refs > 0 || al.input)) m.largest_live.push_back({al.what, al.memory.bytes[d]});
  }
  std::sort(m.largest_live.begin(), m.largest_live.end(),
            [](LiveBuffer const& a, LiveBuffer const& b) { return a.bytes > b.bytes; });
  if (m.largest_live.size() > 5) m.largest_live.resize(5);
  return m;
}

namespace {
std::string bytes_text(std::int64_t b) {
  if (b >= (std::int64_t{1} << 30)) return std::format("{} bytes ({:.2f} GiB)", b, static_cast<double>(b) / (1 << 30));
  if (b >= (std::int64_t{1} << 20)) return std::format("{} bytes ({:.2f} MiB)", b, static_cast<double>(b) / (1 << 20));
  return std::format("{} bytes", b);
}
}  // namespace

std::string memory_analysis_text(MemoryAnalysis const& m, std::string_view indent) {
  if (m.device < 0) return {};
  DeviceMemory const& d = *m.of(m.device);
  std::string s = std::format("{}memory, per device: peak {} on device {} after {}; arguments {}, output {}, "
                              "temporaries {}\n",
                              indent, bytes_text(m.peak_bytes), m.device,
                              m.peak_step < 0 ? std::string("none (the arguments)") : m.peak_label,
                              bytes_text(d.argument_bytes), bytes_text(d.output_bytes), bytes_text(d.temporary_bytes));
  if (!m.largest_live.empty()) {
    s += std::format("{}  largest live there:", indent);
    for (std::size_t k = 0; k < m.largest_live.size(); ++k)
      s += std::format("{} {} ({})", k ? "," : "", m.largest_live[k].what, bytes_text(m.largest_live[k].bytes));
    s += "\n";
  }
  return s;
}

}  // namespace tessel::plan
