// The executor: the plan's steps, in order, each inside a Kokkos Tools region named by its label.
#include "tessel/runtime/execute.hpp"

#include <algorithm>
#include <format>

#include <Kokkos_Core.hpp>
#include <Kokkos_Profiling_ScopedRegion.hpp>

#include "tessel/core/error.hpp"
#include <mutex>
#include <unordered_map>

#include "tessel/core/device_groups.hpp"
#include "tessel/runtime/collectives.hpp"
#include "tessel/runtime/memory_check.hpp"
#include "tessel/runtime/region_kernels.hpp"
#include "tessel/runtime/reshard.hpp"
#include "tessel/runtime/step_devices.hpp"
#include "tessel/runtime/step_observer.hpp"
#include "tessel/runtime/stream.hpp"
#include "kernels/kernel.hpp"
#include "distributed/world.hpp"
#include "tessel/runtime/distributed.hpp"
#include "tessel/runtime/device_placement.hpp"
#include "replicas.hpp"

namespace tessel {

ExecutionCounts& execution_counts() {
  static ExecutionCounts counts;
  return counts;
}

namespace detail {

// An all-reduce (or reduce-scatter, landing on `to`) of `partial` over the groups of `axes`.
ImplPtr complete_reduce(ImplPtr const& partial, plan::Collective kind, NamedSharding const& to,
                        FixedVector<std::uint8_t, max_mesh_axes> const& axes, ReduceOp op) {
  Mesh const& mesh = partial->sharding.mesh();
  // Devices that differ only in their coordinates on the collective's axes form a group.
  auto groups = device_groups(mesh.axes(), axes);
  bool const all_reduce = kind == plan::Collective::all_reduce;
  // An all-reduce's members receive one value: those that share memory share its buffer, written
  // once (every other member's `out` is null).
  std::vector<std::size_t> owner;
  if (all_reduce) {
    owner.resize(partial->shards.size());
    for (auto const& positions : groups) {
      auto first = static_cast<std::size_t>(*std::min_element(positions.begin(), positions.end(), [&](int a, int b) {
        bool la = partial->shards[static_cast<std::size_t>(a)].addressable;
        bool lb = partial->shards[static_cast<std::size_t>(b)].addressable;
        return la != lb ? la : a < b;  // the first of this process's members
      }));
      for (int pos : positions) {
        auto const p = static_cast<std::size_t>(pos);
        bool const shares = partial->shards[p].addressable && partial->shards[first].addressable &&
                            shares_memory(partial->shards[first].device, partial->shards[p].device);
        owner[p] = shares ? first : p;
      }
    }
  }
  auto out = TensorImpl::allocate(partial->shape, partial->dtype, to, owner);
  auto& collectives = tessel::collectives();
  for (auto const& positions : groups) {
    std::vector<GroupMember> members;
    std::vector<Box> pieces;
    for (int pos : positions) {
      auto const& in = partial->shards[static_cast<std::size_t>(pos)];
      auto& o = out->shards[static_cast<std::size_t>(pos)];
      bool const writes = owner.empty() || owner[static_cast<std::size_t>(pos)] == static_cast<std::size_t>(pos);
      members.push_back({in.device, in.bytes.data(), writes ? o.bytes.data() : nullptr});
      pieces.push_back(o.index);
    }
    Box held = partial->shards[static_cast<std::size_t>(positions[0])].index;
    if (all_reduce) collectives.all_reduce(partial->dtype, op, members, held);
    else collectives.reduce_scatter(partial->dtype, op, members, held, pieces);
  }
  return out;
}

namespace {

// A reshape that keeps every device's block: the same shard memory under another shape.
ImplPtr reinterpret_shards(ImplPtr const& in, Shape const& shape, NamedSharding const& sharding) {
  auto out = std::make_shared<TensorImpl>(TensorImpl{shape, in->dtype, sharding, in->shards, in->varying});
  for (std::size_t pos = 0; pos < out->shards.size(); ++pos)
    out->shards[pos].index = sharding.layout().box(shape, static_cast<int>(pos));
  return out;
}

// Scales every element of every shard by 1 / `divisor` (a mean after its all-reduce: XLA rewrites
// the division by the count into a multiplication by its reciprocal, rounded to T).
template <class T>
void divide_shards(TensorImpl const& t, double divisor, char const* label) {
  T const scale = T(1) / static_cast<T>(divisor);
  for (std::size_t pos = 0; pos < t.shards.size(); ++pos) {
    auto const& shard = t.shards[pos];
    if (!shard.addressable || !t.owns_buffer(pos)) continue;  // (replicas sharing a buffer: once)
    auto* data = reinterpret_cast<T*>(shard.bytes.data());
    auto n = static_cast<std::int64_t>(shard.bytes.size() / sizeof(T));
    for_each_index(device(shard.device), label, n, n, KOKKOS_LAMBDA(std::int64_t i) { data[i] *= scale; });
  }
  wait_for_buffer_writers(t);
}

void divide_in_place(TensorImpl const& t, double divisor, char const* label) {
  if (t.dtype == DType::float32) divide_shards<float>(t, divisor, label);
  else if (t.dtype == DType::float64) divide_shards<double>(t, divisor, label);
  else throw Error("mean: integer means are computed in float32");
}

// A sharding change (or one step of one), counted: once per change, and by the collective it ran.
ImplPtr reshard_and_count(ImplPtr const& from, NamedSharding const& to, bool starts_change) {
  auto& counts = execution_counts();
  if (starts_change) ++counts.reshards;
  auto done = reshard_with_collectives(*from, to);
  if (done.collective) ++counts[*done.collective];
  return done.tensor;
}

template <class T>
void round_shards(TensorImpl const& wide, TensorImpl const& out, char const* label) {
  for (std::size_t pos : local_positions(out)) {
    if (!out.owns_buffer(pos)) continue;  // (replicas sharing a buffer: once)
    auto const* src = reinterpret_cast<float const*>(wide.shards[pos].bytes.data());
    auto* dst = reinterpret_cast<T*>(out.shards[pos].bytes.data());
    auto n = static_cast<std::int64_t>(out.shards[pos].bytes.size() / sizeof(T));
    for_each_index(device(out.shards[pos].device), label, n, n, KOKKOS_LAMBDA(std::int64_t i) { dst[i] = T(src[i]); });
  }
  wait_for_buffer_writers(out);
}

// float32 values rounded once to a 16-bit float (a 16-bit dot's partial sums, all-reduced in
// float32), in the same shards: replicas sharing a buffer share the rounded one. (Buffers are told
// apart as TensorImpl::owns_buffer does: an empty shard's pointer may be where the next shard's
// buffer starts, so it shares nothing.)
ImplPtr rounded(TensorImpl const& wide, DType to, char const* label) {
  auto out = TensorImpl::allocate(wide.shape, to, wide.sharding, buffer_owners(wide));
  if (to == DType::bfloat16) round_shards<bfloat16>(wide, *out, label);
  else round_shards<float16>(wide, *out, label);
  return out;
}

// An all-reduce or reduce-scatter completing a reduction's partial results. Partial results held
// wider than the node's dtype (a 16-bit dot's float32 sums: kernels/dot.cpp) are rounded once
// after it.
void reduce_collective(plan::Plan const& plan, plan::Step const& step, std::vector<ImplPtr> const& operands,
                       RunState& state) {
  ImplPtr& result = state.values[static_cast<std::size_t>(step.node)];
  result = complete_reduce(operands[0], step.collective, *step.to, step.axes, step.combine);
  if (step.divide_by) divide_in_place(*result, *step.divide_by, step.label.c_str());
  DType const dtype = dtype_named(plan.graph[static_cast<std::size_t>(step.node)].dtype);
  if (result->dtype != dtype) result = rounded(*result, dtype, step.label.c_str());
}

// The steps the executor runs itself: no op's kernel, only what every step kind means.
void run_generic_step(plan::Plan const& plan, plan::Step const& step, RunState& state) {
  std::vector<ImplPtr> operands;
  operands.reserve(step.operands.size());
  for (int o : step.operands) operands.push_back(state.values[static_cast<std::size_t>(o)]);
  ImplPtr& result = state.values[static_cast<std::size_t>(plan::result_slot(step))];
  auto const& node_plan = plan.nodes[static_cast<std::size_t>(step.node)];
  switch (step.kind) {
    case plan::StepKind::collective:
      if (step.collective == plan::Collective::all_reduce || step.collective == plan::Collective::reduce_scatter) {
        reduce_collective(plan, step, operands, state);
        ++execution_counts()[step.collective];
      } else  // one step of a sharding change (reshard_and_count counts it)
        result = reshard_and_count(operands[0], *step.to, step.starts_reshard);
      return;
    case plan::StepKind::view:
      result = reinterpret_shards(operands[0], plan.graph[static_cast<std::size_t>(step.node)].shape,
                                  *node_plan.after_collective);
      return;
    case plan::StepKind::reshard:
      result = reshard_and_count(operands[0], *step.to, step.starts_reshard);
      return;
    case plan::StepKind::kernel:
    case plan::StepKind::exchange:
      break;
  }
  throw Error(std::format("tessel: internal error: no kernel bound to step '{}'", step.label));
}

void run_step(plan::Plan const& plan, plan::Step const& step, KernelFn kernel, RunState& state) {
  if (kernel != nullptr) kernel(plan, step, state);
  else run_generic_step(plan, step, state);
  auto& counts = execution_counts();
  if (step.kind == plan::StepKind::kernel) ++counts.kernels;
  // A collective an op's kernel runs counts here; the executor's own count themselves.
  if (step.kind == plan::StepKind::collective && kernel != nullptr) ++counts[step.collective];
}

}  // namespace

ImplPtr execute(plan::Plan const& plan, StepKernels const& kernels, RunState& state) {
  struct Labelled {  // the step's label for every kernel it launches (launch.hpp)
    explicit Labelled(std::string const& label) : region(label) { running_step_label = label.c_str(); }
    ~Labelled() { running_step_label = nullptr; }
    Kokkos::Profiling::ScopedRegion region;
  };
  for (std::size_t k = 0; k < plan.steps.size(); ++k) {
    auto const& step = plan.steps[k];
    Labelled scope(step.label);
    if (StepObserver* watch = active_step_observer) [[unlikely]] {  // a trace or a profile (tools/)
      watch->before(plan, k, state);
      run_step(plan, step, kernels[k], state);
      watch->after(plan, k, state);
    } else {
      run_step(plan, step, kernels[k], state);
    }
    // What no later step reads is dropped now (its memory back to the pool), not when the plan ends.
    for (int o : step.operands)
      if (plan::drops_after(plan.last_read, step, k, o)) state.values[static_cast<std::size_t>(o)].reset();
  }
  return state.values[static_cast<std::size_t>(plan.slot.back())];
}

bool same_value(plan::Plan const& plan, RunState const& state, int a, int b) {
  auto ia = static_cast<std::size_t>(a), ib = static_cast<std::size_t>(b);
  // One value slot: the planner's CSE made them one value (a GEMM's scores read twice by a
  // softmax are computed once), whatever their kind.
  if (ia < plan.slot.size() && ib < plan.slot.size() && plan.slot[ia] == plan.slot[ib]) return true;
  if (!plan::computes_alike(plan.nodes[ia], plan.nodes[ib])) return false;
  plan::GraphNode const& x = plan.graph[ia];
  plan::GraphNode const& y = plan.graph[ib];
  auto children_alike = [&] {
    if (x.children.size() != y.children.size()) return false;
    for (std::size_t k = 0; k < x.children.size(); ++k)
      if (!same_value(plan, state, x.children[k], y.children[k])) return false;
    return true;
  };
  // Leaves: the same bound value. Nodes of fused regions (and a constraint, which moves its
  // operand's value): the same attributes and operands. Other boundaries are not worth comparing.
  switch (x.kind) {
    case NodeKind::tensor: return state.inputs[ia] == state.inputs[ib];
    case NodeKind::scalar: return state.scalars[ia] == state.scalars[ib];
    default: break;
  }
  if (computed(x.kind) == Computed::kernel) return false;
  return plan::same_attributes(x, y) && children_alike();
}

namespace {
// Whether the plan's devices are on more than one process. A plan on one process's devices runs
// there alone (the others skip every shard), with nothing to agree on; every process answers alike.
bool spans_processes(plan::Plan const& plan) {
  int first = -1;
  for (auto const& n : plan.nodes)
    if (n.out)
      for (int id : n.out->mesh().device_ids()) {
        int p = distributed::process_of(id);
        if (first < 0) first = p;
        else if (p != first) return true;
      }
  return false;
}

bool all_equal(std::vector<unsigned long long> const& words) {
  return std::all_of(words.begin(), words.end(), [&](auto w) { return w == words[0]; });
}

// On a plan's first run, every process must be about to run the same instructions: otherwise the
// collectives would pair up wrongly and hang (as JAX does). Compared by fingerprint, once per plan.
void agree_on_plan(plan::Plan const& plan) {
  if (distributed::process_count() == 1 || !spans_processes(plan)) return;
  auto all = distributed::all_gather_word(plan.fingerprint());
  if (all_equal(all)) return;
  std::string list;
  for (std::size_t p = 0; p < all.size(); ++p) list += std::format("{}process {}: {:016x}", p ? ", " : "", p, all[p]);
  // The first instruction that differs: every process compares the same gathered hashes, so all
  // stop at the same one.
  auto counts = distributed::all_gather_word(plan.steps.size());
  std::size_t common = *std::min_element(counts.begin(), counts.end());
  std::string where;
  for (std::size_t k = 0; k < common && where.empty(); ++k) {
    if (!all_equal(distributed::all_gather_word(plan.step_fingerprint(k))))
      where = std::format("instruction {} differs; this process's is '{}'", k, plan.steps[k].label);
  }
  if (where.empty())
    where = common < *std::max_element(counts.begin(), counts.end())
                ? std::format("the plans have different numbers of instructions, alike for the first {}", common)
                : std::string("the instructions are alike but the inputs' shapes, shardings or meshes differ");
  throw Error(std::format("tessel: the processes are about to run different plans ({}): {}. Every process must run "
                          "the same program on the same shapes, shardings and meshes. This process's plan (process "
                          "{}):\n{}",
                          list, where, distributed::process_index(), plan::to_string(plan, nullptr, placement_note())));
}
}  // namespace

StepKernels bind_kernels(plan::Plan const& plan, std::vector<KernelFn> const& regions) {
  agree_on_plan(plan);
  check_plan_fits(plan);  // (once per plan: its kernels are bound once)
  StepKernels kernels(plan.steps.size(), nullptr);
  for (std::size_t k = 0; k < plan.steps.size(); ++k) {
    auto const& step = plan.steps[k];
    NodeKind kind = plan.graph[static_cast<std::size_t>(step.node)].kind;
    if (step.by_op) kernels[k] = kernel_for(kind);
    else if (step.kind == plan::StepKind::kernel) kernels[k] = regions[static_cast<std::size_t>(step.node)];
    bool needs_kernel = step.by_op || step.kind == plan::StepKind::kernel;
    if (needs_kernel && kernels[k] == nullptr)
      throw Error(std::format("tessel: internal error: no kernel for step '{}'", step.label));
  }
  return kernels;
}

namespace {
struct KernelCache {
  std::mutex mutex;
  std::unordered_map<plan::Plan const*, std::unique_ptr<StepKernels>> bound;
};
KernelCache& kernel_cache() {
  static KernelCache cache;
  return cache;
}
}  // namespace

StepKernels const* cached_kernels(plan::Plan const& plan) {
  auto& cache = kernel_cache();
  std::lock_guard lock(cache.mutex);
  auto it = cache.bound.find(&plan);
  return it == cache.bound.end() ? nullptr : it->second.get();
}

StepKernels const& keep_kernels(plan::Plan const& plan, StepKernels kernels) {
  auto& cache = kernel_cache();
  std::lock_guard lock(cache.mutex);
  auto& slot = cache.bound[&plan];
  slot = std::make_unique<StepKernels>(std::move(kernels));
  return *slot;
}

std::unique_lock<std::mutex> lock_kernel_binding() {
  static std::mutex binding;
  return std::unique_lock(binding);
}

ImplPtr reshard_counted(ImplPtr const& from, NamedSharding const& to) { return reshard_and_count(from, to, true); }

void fence_step_devices(plan::Plan const& plan, std::size_t step, RunState const& state) {
  plan::Step const& s = plan.steps[step];
  std::vector<int> ids;
  auto add = [&](NamedSharding const& sharding) {
    for (int id : sharding.mesh().device_ids())
      if (is_local_device(id) && std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  for (int o : s.operands)
    if (auto const& value = state.values[static_cast<std::size_t>(o)]) add(value->sharding);
  if (auto made = plan::made_sharding(plan, s)) add(*made);
  fence_devices(ids);
}

}  // namespace detail
}  // namespace tessel
