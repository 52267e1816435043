#pragma once
// The memory analysis's walk, declared in plan/memory_analysis.hpp (which includes this file after
// its declarations): the allocations a slot holds while anything refers to them, what a step holds
// while it runs, and the walk over the instruction list that finds each device's peak. The buffers
// each value takes are plan/detail/value_buffers.hpp's.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "tessel/core/buffer_bytes.hpp"
#include "tessel/plan/plan.hpp"
#include "tessel/plan/memory_types.hpp"
#include "tessel/plan/detail/value_buffers.hpp"
#include "tessel/plan/reshard.hpp"

namespace tessel::plan {

namespace detail {

// One allocation a slot may hold: the bytes each device holds of it, while anything refers to it.
struct Allocation {
  ValueMemory memory;
  std::string what;
  int refs = 0;
  bool input = false;  // held by the caller: never dropped by the plan
};

// What memory_analysis reads of a whole walk.
struct WalkResult {
  std::vector<Allocation> allocations;
  std::vector<int> slot;
};

struct Walk {
  Plan const& plan;
  MemoryLayout const& layout;
  std::size_t device_slots;
  std::vector<Allocation> allocations;
  std::vector<int> slot;  // value slot -> allocation (-1: none yet)
  std::vector<std::optional<NamedSharding>> held;  // value slot -> its sharding
  std::span<int const> last_read;
  std::vector<std::int64_t> live;

  constexpr void hold(int a) {
    auto& al = allocations[static_cast<std::size_t>(a)];
    if (al.refs++ > 0) return;
    for (std::size_t d = 0; d < al.memory.bytes.size(); ++d) live[d] += al.memory.bytes[d];
  }
  constexpr void drop(int a) {
    if (a < 0) return;
    auto& al = allocations[static_cast<std::size_t>(a)];
    if (--al.refs > 0 || al.input) return;
    for (std::size_t d = 0; d < al.memory.bytes.size(); ++d) live[d] -= al.memory.bytes[d];
  }
  constexpr int add(ValueMemory memory, std::string what, bool input) {
    memory.bytes.resize(device_slots, 0);
    for (auto& b : memory.buffer) b += static_cast<std::int64_t>(allocations.size()) << 20;  // (ids apart)
    allocations.push_back(Allocation{std::move(memory), std::move(what), 0, input});
    return static_cast<int>(allocations.size()) - 1;
  }
  // The executor drops what no later step reads (Plan::last_read).
  constexpr void drop_read(Step const& step, std::size_t k) {
    for (int o : step.operands)
      if (drops_after(last_read, step, k, o)) set_slot(o, -1);
  }
  constexpr void set_slot(int s, int a) {
    int const old = slot[static_cast<std::size_t>(s)];
    if (a >= 0) hold(a);
    slot[static_cast<std::size_t>(s)] = a;
    drop(old);
  }
};

// Whether a fused region's replicas at positions q and p read the same memory the same way, so
// that the runtime computes their block once (runtime/shared_buffers.hpp): every tensor operand of
// the step lies in one buffer at both.
constexpr bool reads_alike(Walk const& w, Step const& step, NamedSharding const& made, std::size_t q, std::size_t p) {
  for (int o : step.operands) {
    int const a = w.slot[static_cast<std::size_t>(o)];
    if (a < 0) continue;  // a scalar
    auto const& buffer = w.allocations[static_cast<std::size_t>(a)].memory.buffer;
    if (buffer.size() != static_cast<std::size_t>(made.mesh().num_devices()) || buffer[q] != buffer[p]) return false;
  }
  return true;
}

// What a step holds only while it runs, per device id: a reduction with few outputs per device
// sums each output's rows in up to reduce_runs runs (runtime/region_launch.hpp) into a scratch
// buffer. A 16-bit GEMM (runtime/local_dot.cpp) writes its result, or the float32 partial sums a
// collective completes, itself where the CPU has a GEMM of that dtype (layout); where not, it
// widens each operand's block into a float32 copy and computes a 16-bit result in float32 first.
// (GEMM operands copied into BLAS order are not counted.) held: the operands' shardings, by value
// slot.
constexpr std::vector<std::int64_t> step_scratch(Plan const& plan, Step const& step, NamedSharding const& made,
                                                 MemoryLayout const& layout,
                                                 std::vector<std::optional<NamedSharding>> const& held,
                                                 std::size_t device_slots) {
  std::vector<std::int64_t> scratch(device_slots, 0);
  GraphNode const& n = plan.graph[static_cast<std::size_t>(step.node)];
  bool const reduce = step.kind == StepKind::kernel && !step.by_op && n.kind == NodeKind::reduce;
  bool const gemm16 = step.kind == StepKind::kernel && n.kind == NodeKind::dot && n.dtype_bytes == 2;
  if (!reduce && !gemm16) return scratch;
  auto const add_float32_block = [&](NamedSharding const& s, Shape const& shape) {
    for (int q = 0; q < s.mesh().num_devices(); ++q) {
      auto const d = static_cast<std::size_t>(s.mesh().device_id(q));
      std::int64_t const elements = s.shard_shape(shape, q).num_elements();
      if (d < device_slots && elements > 0)
        scratch[d] += static_cast<std::int64_t>(pool_block_bytes(static_cast<std::size_t>(elements) * 4));
    }
  };
  if (gemm16) {
    bool const native = same_text(n.dtype, "bfloat16") ? layout.bfloat16_gemm : layout.float16_gemm;
    bool const partial = plan.nodes[static_cast<std::size_t>(step.node)].collective.has_value();
    if (!native && !partial) add_float32_block(made, n.shape);
    if (!native)
      for (int o : step.operands)
        if (auto const& s = held[static_cast<std::size_t>(o)]) add_float32_block(*s, plan.graph[plan.node_of_slot(o)].shape);
    return scratch;
  }
  Mesh const& mesh = made.mesh();
  for (int p = 0; p < mesh.num_devices(); ++p) {
    auto const d = static_cast<std::size_t>(mesh.device_id(p));
    std::int64_t const out_elements = made.shard_shape(n.shape, p).num_elements();
    if (out_elements == 0 || d >= device_slots) continue;
    auto const child = static_cast<std::size_t>(n.children.empty() ? -1 : n.children[0]);
    if (child >= plan.graph.size() || !plan.nodes[child].out) continue;
    Shape const in = plan.nodes[child].out->shard_shape(plan.graph[child].shape, p);
    // The space: kept dimensions, then reduced ones; the last reduced one is walked within a run.
    std::int64_t outputs = 1, reduced = 1, last = 1;
    for (std::size_t a = 0; a < in.size(); ++a) {
      bool const is_reduced = std::find(n.axes.begin(), n.axes.end(), a) != n.axes.end();
      (is_reduced ? reduced : outputs) *= in[a];
      if (is_reduced) last = in[a];
    }
    if (n.axes.empty()) last = 1;
    if (outputs >= reduce_scratch_outputs) continue;
    std::int64_t const per_output = last == 0 ? 0 : reduced / last;
    std::int64_t const runs = std::max<std::int64_t>(1, std::min(per_output, reduce_runs));
    std::size_t const accumulator = n.dtype_bytes == 2 ? 4 : n.dtype_bytes;  // (16-bit floats sum in float)
    scratch[d] = static_cast<std::int64_t>(pool_block_bytes(static_cast<std::size_t>(outputs * runs) * accumulator));
  }
  return scratch;
}

}  // namespace detail

constexpr MemoryAnalysis memory_analysis(Plan const& plan, MemoryLayout const& layout,
                                         std::span<std::optional<ValueMemory> const> arguments, bool name_largest) {
  using namespace detail;
  Graph const& g = plan.graph;
  // Every device id a value of the plan lives on.
  int top = 0;
  auto note_mesh = [&](std::optional<NamedSharding> const& s) {
    if (s)
      for (int p = 0; p < s->mesh().num_devices(); ++p) top = std::max(top, s->mesh().device_id(p));
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

  // As the executor drops values (Plan::last_read; none listed: they live until the plan ends).
  std::span<int const> const last_read(plan.last_read);
  // Walks the steps, keeping each device's peak; returns the walk's state at the end, or when
  // `stop` is a step's index, just after that step made its result (its operands still live):
  // -1 stops after the arguments, before any step.
  constexpr int to_the_end = -2;
  auto walk = [&](int stop) {
    std::size_t const slots = std::max(plan.slots, g.size());
    Walk w{plan, layout, device_slots, {}, std::vector<int>(slots, -1), std::vector<std::optional<NamedSharding>>(slots),
           last_read, std::vector<std::int64_t>(device_slots, 0)};
    for (std::size_t i = 0; i < g.size(); ++i) {
      if (g[i].kind != NodeKind::tensor || !g[i].sharding) continue;
      int const s = plan.slot[i];
      if (w.slot[static_cast<std::size_t>(s)] >= 0) continue;
      ValueMemory vm = i < arguments.size() && arguments[i]
                           ? *arguments[i]
                           : value_memory(g[i].shape, static_cast<int>(g[i].dtype_bytes), *g[i].sharding, layout, true);
      int const a = w.add(std::move(vm), "argument (node " + decimal(static_cast<std::int64_t>(i)) + ")", true);
      w.set_slot(s, a);
      w.held[static_cast<std::size_t>(s)] = g[i].sharding;
    }
    arguments_held = w.live;
    for (std::size_t d = 0; d < device_slots; ++d) {
      peak[d] = w.live[d];
      peak_step[d] = -1;
    }
    if (stop == -1) return w;
    for (std::size_t k = 0; k < plan.steps.size(); ++k) {
      Step const& step = plan.steps[k];
      int const rs = result_slot(step);
      GraphNode const& n = g[static_cast<std::size_t>(step.node)];
      if (step.kind == StepKind::view) {  // the operand's memory, read as another shape
        if (!step.operands.empty()) w.set_slot(rs, w.slot[static_cast<std::size_t>(step.operands[0])]);
        w.held[static_cast<std::size_t>(rs)] = made_sharding(plan, step);
        w.drop_read(step, k);
        continue;
      }
      auto made = made_sharding(plan, step);
      if (step.kind == StepKind::exchange || !made) {  // (an exchange: in place, cumsum's carry)
        w.drop_read(step, k);
        continue;
      }
      bool const reduces = step.kind == StepKind::collective &&
                           (step.collective == Collective::all_reduce || step.collective == Collective::reduce_scatter);
      if ((step.kind == StepKind::reshard || (step.kind == StepKind::collective && !reduces && !step.by_op)) &&
          !step.operands.empty()) {
        // A sharding change where every device keeps its block keeps its buffers too
        // (detail::reshard_with_collectives).
        auto const from = static_cast<std::size_t>(step.operands[0]);
        auto const& source = w.held[from];
        if (source && w.slot[from] >= 0 && source->mesh() == made->mesh() &&
            decompose(n.shape, n.dtype_bytes, *source, *made).empty()) {
          w.set_slot(rs, w.slot[from]);
          w.held[static_cast<std::size_t>(rs)] = made;
          w.drop_read(step, k);
          continue;
        }
      }
      std::vector<std::size_t> owner;
      if (step.kind == StepKind::collective && step.collective == Collective::all_reduce) {
        // Members of a group (positions alike but on the collective's axes) that share memory
        // share the result's buffer (detail::complete_reduce).
        MeshAxes const& axes = made->mesh().axes();
        owner = owners(n.shape, *made, layout, [&](std::size_t q, std::size_t p) {
          auto const cq = axes.coords(static_cast<int>(q)), cp = axes.coords(static_cast<int>(p));
          for (std::size_t a = 0; a < axes.num_axes(); ++a)
            if (cq[a] != cp[a] && std::find(step.axes.begin(), step.axes.end(), a) == step.axes.end()) return false;
          return true;
        });
      } else if (step.kind == StepKind::kernel && !step.by_op && n.kind != NodeKind::reduce) {
        owner = owners(n.shape, *made, layout, [&](std::size_t q, std::size_t p) { return reads_alike(w, step, *made, q, p); });
      } else {
        owner = owners(n.shape, *made, layout, [](std::size_t, std::size_t) { return false; });
      }
      // A 16-bit dot's partial sums are float32 (made_element_bytes) until the collective completing
      // them; its result is rounded into a value of the dot's dtype, the float32 one live meanwhile.
      std::size_t const made_bytes = made_element_bytes(plan, step);
      bool const rounds = step.kind == StepKind::collective && made_bytes != n.dtype_bytes;
      ValueMemory vm = memory_with_owners(n.shape, static_cast<int>(rounds ? n.dtype_bytes : made_bytes), *made, layout, owner, 0);
      std::vector<std::int64_t> scratch = step_scratch(plan, step, *made, layout, w.held, device_slots);
      if (rounds) {
        ValueMemory const wide = memory_with_owners(n.shape, static_cast<int>(made_bytes), *made, layout, owner, 0);
        for (std::size_t d = 0; d < device_slots && d < wide.bytes.size(); ++d) scratch[d] += wide.bytes[d];
      }
      int const a = w.add(std::move(vm), "#" + decimal(static_cast<std::int64_t>(k)) + " " + step.label, false);
      w.hold(a);  // (live with the value it replaces, as the executor's assignment has both)
      for (std::size_t d = 0; d < device_slots; ++d)
        if (w.live[d] + scratch[d] > peak[d]) {
          peak[d] = w.live[d] + scratch[d];
          peak_step[d] = static_cast<int>(k);
        }
      if (static_cast<int>(k) == stop) return w;
      w.set_slot(rs, a);
      w.drop(a);
      w.held[static_cast<std::size_t>(rs)] = made;
      w.drop_read(step, k);
    }
    return w;
  };

  // (the whole walk's allocations and slots, taken from it inside a lambda: nvcc's front end
  // refuses a Walk variable, which holds references, in a constexpr function)
  auto const all = [&] {
    Walk w = walk(to_the_end);
    return WalkResult{std::move(w.allocations), std::move(w.slot)};
  }();
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
  if (m.device < 0 || !name_largest) return m;
  if (m.peak_step >= 0) m.peak_label = "#" + decimal(m.peak_step) + " " + plan.steps[static_cast<std::size_t>(m.peak_step)].label;
  // What is live on that device at its peak: the walk again, up to it.
  auto const at_peak = [&] { return std::move(walk(m.peak_step).allocations); }();
  auto const d = static_cast<std::size_t>(m.device);
  for (Allocation const& al : at_peak) {
    if (al.memory.bytes[d] > 0 && (al.refs > 0 || al.input)) m.largest_live.push_back({al.what, al.memory.bytes[d]});
  }
  std::sort(m.largest_live.begin(), m.largest_live.end(),
            [](LiveBuffer const& a, LiveBuffer const& b) { return a.bytes > b.bytes; });
  if (m.largest_live.size() > 5) m.largest_live.resize(5);
  return m;
}

}  // namespace tessel::plan
