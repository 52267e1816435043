// The built-in workloads, written as bench/ writes them (bench/bench_elementwise.cpp,
// bench_normalization.cpp, bench_matmul.cpp, bench_collectives.cpp): the same expressions,
// shardings and byte counts, at sizes the study file chooses and on its configuration's mesh.
//
// Bytes and flops per call (the FOM divides them by the median time):
//   fused_chain     tanh(a * x + b) * 0.5 - x / 3 on n floats: 3 reads + 1 write; 6 flops/element
//                   (the *_bf16 variants: the same on bfloat16, bytes counted at 2 per element)
//   softmax         over the last axis of (rows, cols): 1 read + 1 write; 5 flops/element
//                   (max, subtract, exp, sum, divide)
//   layer_norm_gelu gelu((x - mean) * rsqrt(var + eps) * g + b): 1 read + 1 write; 20 flops/element
//   rms_norm        x * rsqrt(mean(x^2) + eps) * g: 1 read + 1 write; 4 flops/element
//   megatron_mlp    relu(x @ W1) @ W2: 4 * batch * model * hidden flops; bytes of x, W1, W2, y
//   attention       causal softmax(q k^T / sqrt(d)) v (bench_attention.cpp): the two GEMMs'
//                   4 * batch * heads * seq^2 * head_dim flops (the masked half included, as XLA
//                   counts them); bytes of q, k, v and the output
//   transformer     one pre-norm layer (bench_transformer.cpp): the GEMMs' flops (Q, K, V, output
//                   projections, attention, MLP); bytes of x, the weights and the output
//   collectives     (sum of the members' in buffers + sum of their out buffers) / 2, the least
//                   traffic any implementation has, as bench_collectives counts it
// (A flop is one elementwise op or reduction step, exp and tanh counted once: the intensities
// place the workloads on a roofline, they are not an instruction count.)
#include "workloads.hpp"

#include <algorithm>
#include <cmath>
#include <format>
#include <numeric>

#include "attention_layers.hpp"
#include "tessel/runtime/collectives.hpp"
#include "tessel/core/device_groups.hpp"
#include "tessel/tessel.hpp"
#include "tessel/tools/profile.hpp"

namespace tessel::study {

namespace {

using Buffer = Kokkos::View<float*, MemSpace>;

Mesh mesh_of(Configuration const& c) {
  MeshSizes sizes;
  MeshNames names;
  for (std::size_t i = 0; i < c.mesh.size(); ++i) {
    sizes.push_back(c.mesh[i]);
    names.push_back(AxisName(c.axes[i]));
  }
  return make_mesh(MeshAxes(sizes, names));
}

// Appends profile(f, args...)'s instructions, numbered `call`.
template <class F, class... Args>
void append_profile(std::vector<InstructionTime>& out, int call, Jitted<F> const& f, Args const&... args) {
  for (auto const& r : profile(f, args...).rows)
    out.push_back({call, r.step, r.label, r.kind, r.measured_us, r.estimate_us, r.flops, r.bytes_read + r.bytes_written});
}

// The profile of a workload that is one jitted call.
template <class F, class... Args>
std::function<std::vector<InstructionTime>()> profile_of(Jitted<F> f, Args... args) {
  return [=] {
    std::vector<InstructionTime> out;
    append_profile(out, 0, f, args...);
    return out;
  };
}

// Dimension 0 over every mesh axis (major to minor), the rest replicated.
PartitionSpec rows_over_all_axes(Configuration const& c, std::size_t rank) {
  FixedVector<AxisName, max_mesh_axes> names;
  for (auto const& a : c.axes) names.push_back(AxisName(a));
  FixedVector<DimSpec, max_rank> dims;
  dims.push_back(DimSpec::of(names));
  for (std::size_t d = 1; d < rank; ++d) dims.push_back(DimSpec{});
  return PartitionSpec::from_dims(dims);
}

std::optional<std::string> divisible(std::int64_t n, char const* what, Configuration const& c) {
  if (n % c.devices != 0) return std::format("{} = {} is not divisible by the {} devices", what, n, c.devices);
  return std::nullopt;
}

std::optional<std::string> check_elements(Size const& s, Configuration const& c) { return divisible(s["n"], "n", c); }
std::optional<std::string> check_rows(Size const& s, Configuration const& c) { return divisible(s["rows"], "rows", c); }

// T: float, or bfloat16 (the same workload with half the bytes; every op rounds, as in JAX).
template <class T = float>
Instance fused_chain(Size const& s, Configuration const& c) {
  std::int64_t n = s["n"];
  NamedSharding sh(mesh_of(c), rows_over_all_axes(c, 1));
  auto a = random::normal<T>(PRNGKey(0), {n}, sh);
  auto x = random::normal<T>(PRNGKey(1), {n}, sh);
  auto b = random::normal<T>(PRNGKey(2), {n}, sh);
  auto chain = [](auto const& a, auto const& x, auto const& b) { return tanh(a * x + b) * 0.5f - x / 3.0f; };
  return {[=] { Tensor<T> y = eval(chain(a, x, b)); }, 4.0 * n * sizeof(T), 6.0 * n, profile_of(jit(chain), a, x, b)};
}

template <class T = float, class F>
Instance rows_workload(Size const& s, Configuration const& c, double flops_per_element, F normalize) {
  std::int64_t rows = s["rows"], cols = s["cols"];
  auto mesh = mesh_of(c);
  auto x = random::normal<T>(PRNGKey(0), {rows, cols}, NamedSharding(mesh, rows_over_all_axes(c, 2)));
  auto g = random::uniform<T>(PRNGKey(1), {cols}, NamedSharding(mesh, P()), 0.5f, 1.5f);
  auto b = random::normal<T>(PRNGKey(2), {cols}, NamedSharding(mesh, P()));
  double elements = static_cast<double>(rows) * static_cast<double>(cols);
  return {[=] { Tensor<T> y = eval(normalize(x, g, b)); }, 2.0 * elements * sizeof(T), flops_per_element * elements,
          profile_of(jit(normalize), x, g, b)};
}

template <class T = float>
Instance softmax_rows(Size const& s, Configuration const& c) {
  return rows_workload<T>(s, c, 5, [](auto const& x, auto const&, auto const&) { return softmax(x); });
}
template <class T = float>
Instance layer_norm_gelu(Size const& s, Configuration const& c) {
  return rows_workload<T>(s, c, 20, [](auto const& x, auto const& g, auto const& b) {
    return gelu((x - mean(x, -1, true)) * rsqrt(var(x, -1, true) + 1e-5f) * g + b);
  });
}
Instance rms_norm_rows(Size const& s, Configuration const& c) {
  return rows_workload(s, c, 4, [](auto const& x, auto const& g, auto const&) { return rms_norm(x, g); });
}

// (dp, mp): a 1-axis mesh is all data parallel.
std::pair<int, int> dp_mp_sizes(Configuration const& c) {
  return c.mesh.size() == 1 ? std::pair{c.mesh[0], 1} : std::pair{c.mesh[0], c.mesh[1]};
}

Mesh dp_mp_mesh(Configuration const& c) {
  auto [dp, mp] = dp_mp_sizes(c);
  Configuration two = c;
  two.mesh = {dp, mp};
  two.axes = {c.axes[0], c.mesh.size() == 2 ? c.axes[1] : std::string("mp")};
  return mesh_of(two);
}

// A workload on (dp, mp): batch over dp, the size parameter `over_mp` over mp.
std::optional<std::string> check_dp_mp(Size const& s, Configuration const& c, char const* over_mp) {
  if (c.mesh.size() > 2) return std::format("it needs a mesh of 1 or 2 axes (dp, mp), not {}", c.mesh.size());
  auto [dp, mp] = dp_mp_sizes(c);
  if (s["batch"] % dp) return std::format("batch = {} is not divisible by the mesh's first axis ({})", s["batch"], dp);
  if (s[over_mp] % mp)
    return std::format("{} = {} is not divisible by the mesh's second axis ({})", over_mp, s[over_mp], mp);
  return std::nullopt;
}

std::optional<std::string> check_mlp(Size const& s, Configuration const& c) { return check_dp_mp(s, c, "hidden"); }

Instance megatron_mlp(Size const& s, Configuration const& c) {
  std::int64_t batch = s["batch"], model = s["model"], hidden = s["hidden"];
  auto mesh = dp_mp_mesh(c);
  AxisName d = mesh.axes().name(0), m = mesh.axes().name(1);
  auto x = random::normal(PRNGKey(0), {batch, model}, NamedSharding(mesh, P(d, None)));
  auto w1 = random::normal(PRNGKey(1), {model, hidden}, NamedSharding(mesh, P(None, m)));
  auto w2 = random::normal(PRNGKey(2), {hidden, model}, NamedSharding(mesh, P(m, None)));
  auto mlp = jit([](auto const& x, auto const& w1, auto const& w2) { return matmul(relu(x.matmul(w1)), w2); });
  double flops = 4.0 * static_cast<double>(batch) * static_cast<double>(model) * static_cast<double>(hidden);
  double bytes = 4.0 * (2.0 * batch * model + 2.0 * model * hidden);
  return {[=] { auto y = mlp(x, w1, w2); }, bytes, flops, profile_of(mlp, x, w1, w2)};
}

// The attention and transformer workloads run on (dp, mp) as the MLP does: batch over dp, heads
// over mp.
std::optional<std::string> check_heads(Size const& s, Configuration const& c) { return check_dp_mp(s, c, "heads"); }

std::optional<std::string> check_transformer(Size const& s, Configuration const& c) {
  if (s["model"] % s["heads"])
    return std::format("model = {} is not divisible by heads = {} (head_dim = model / heads)", s["model"], s["heads"]);
  if (auto why = check_heads(s, c)) return why;
  return check_mlp(s, c);  // hidden over mp (the mesh and batch passed check_heads)
}

Instance attention(Size const& s, Configuration const& c) {
  std::int64_t batch = s["batch"], seq = s["seq"], heads = s["heads"], head_dim = s["head_dim"];
  auto mesh = dp_mp_mesh(c);
  NamedSharding sh(mesh, P(mesh.axes().name(0), None, mesh.axes().name(1), None));
  Shape shape{batch, seq, heads, head_dim};
  auto q = random::normal(PRNGKey(0), shape, sh);
  auto k = random::normal(PRNGKey(1), shape, sh);
  auto v = random::normal(PRNGKey(2), shape, sh);
  auto f = measure::causal_attention();
  double elements = static_cast<double>(batch) * static_cast<double>(seq) * static_cast<double>(heads) *
                    static_cast<double>(head_dim);
  return {[=] { auto y = f(q, k, v); }, 4.0 * elements * sizeof(float), 4.0 * elements * static_cast<double>(seq),
          profile_of(f, q, k, v)};
}

Instance transformer(Size const& s, Configuration const& c) {
  std::int64_t batch = s["batch"], seq = s["seq"], model = s["model"], heads = s["heads"], hidden = s["hidden"];
  std::int64_t head_dim = model / heads;
  auto mesh = dp_mp_mesh(c);
  AxisName dp = mesh.axes().name(0), mp = mesh.axes().name(1);
  auto on = [&](auto... spec) { return NamedSharding(mesh, P(spec...)); };
  auto weight = [&](std::uint32_t seed, Shape const& shape, NamedSharding const& sh) {
    return Tensor<float>(random::normal(PRNGKey(seed), shape, sh) * (1.0f / std::sqrt(static_cast<float>(shape[0]))));
  };
  auto x = random::normal(PRNGKey(0), {batch, seq, model}, on(dp, None, None));
  Tensor<float> g1 = random::uniform(PRNGKey(1), {model}, on(), 0.5f, 1.5f), b1 = random::normal(PRNGKey(2), {model}, on());
  Tensor<float> g2 = random::uniform(PRNGKey(3), {model}, on(), 0.5f, 1.5f), b2 = random::normal(PRNGKey(4), {model}, on());
  auto wq = weight(5, {model, heads, head_dim}, on(None, mp, None));
  auto wk = weight(6, {model, heads, head_dim}, on(None, mp, None));
  auto wv = weight(7, {model, heads, head_dim}, on(None, mp, None));
  auto wo = weight(8, {heads, head_dim, model}, on(mp, None, None));
  auto w1 = weight(9, {model, hidden}, on(None, mp));
  auto w2 = weight(10, {hidden, model}, on(mp, None));
  auto first = measure::attention_half();
  auto second = measure::mlp_half();
  double tokens = static_cast<double>(batch) * static_cast<double>(seq), m = static_cast<double>(model);
  double flops = 2.0 * tokens * m * m * 4                                     // Q, K, V, output projection
                 + 4.0 * tokens * static_cast<double>(seq) * m                // scores and p . v
                 + 2.0 * 2.0 * tokens * m * static_cast<double>(hidden);      // the MLP
  double bytes = 4.0 * (2.0 * tokens * m + 4.0 * m * m + 2.0 * m * static_cast<double>(hidden) + 4.0 * m);
  return {[=] {
            Tensor<float> x1 = first(x, g1, b1, wq, wk, wv, wo);
            auto y = second(x1, g2, b2, w1, w2);
          },
          bytes, flops, [=] {
            std::vector<InstructionTime> out;
            append_profile(out, 0, first, x, g1, b1, wq, wk, wv, wo);
            Tensor<float> x1 = first(x, g1, b1, wq, wk, wv, wo);
            append_profile(out, 1, second, x1, g2, b2, w1, w2);
            return out;
          }};
}

// The collectives, over one group of every device of the mesh, on buffers of `mb` MiB per device
// (the larger of in and out), as bench_collectives does for 8 devices and 64 MiB.
struct Group {
  std::vector<Buffer> ins, outs;
  std::vector<GroupMember> members;
  Group(Configuration const& c, std::int64_t in_elements, std::int64_t out_elements) {
    auto mesh = mesh_of(c);
    std::vector<int> all(c.mesh.size());
    std::iota(all.begin(), all.end(), 0);
    auto positions = device_groups(mesh.axes(), all)[0];
    for (int k = 0; k < c.devices; ++k) {
      ins.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "study_in"), in_elements);
      outs.emplace_back(Kokkos::view_alloc(Kokkos::WithoutInitializing, "study_out"), out_elements);
      Kokkos::deep_copy(ins.back(), static_cast<float>(k));  // touches every page before timing
      Kokkos::deep_copy(outs.back(), 0.0f);
      members.push_back({mesh.device_id(positions[static_cast<std::size_t>(k)]),
                         reinterpret_cast<std::byte const*>(ins.back().data()),
                         reinterpret_cast<std::byte*>(outs.back().data())});
    }
  }
};

constexpr std::int64_t cols = 1024;  // a row of 4 KiB
std::int64_t rows_of(Size const& s) { return s["mb"] * (std::int64_t{1} << 20) / 4 / cols; }

std::optional<std::string> check_collective(Size const& s, Configuration const& c) {
  if (c.devices < 2) return "a collective needs at least 2 devices";
  if (rows_of(s) % c.devices)
    return std::format("mb = {} gives {} rows of 4 KiB, not divisible by the {} devices", s["mb"], rows_of(s), c.devices);
  return std::nullopt;
}

Box row_block(Box box, int k, int n) {
  std::int64_t r = box[0].size() / n;
  box[0] = {box[0].start + r * k, box[0].start + r * (k + 1)};
  return box;
}

double traffic(Configuration const& c, std::int64_t in_elements, std::int64_t out_elements) {
  return static_cast<double>(in_elements + out_elements) * c.devices * 4.0 / 2.0;
}

Instance all_reduce(Size const& s, Configuration const& c) {
  std::int64_t r = rows_of(s), e = r * cols;
  auto g = std::make_shared<Group>(c, e, e);
  Box held{{0, r}, {0, cols}};
  return {[=] { in_process_collectives().all_reduce(DType::float32, ReduceOp::sum, g->members, held); },
          traffic(c, e, e), static_cast<double>(c.devices - 1) * static_cast<double>(e)};
}

Instance all_gather(Size const& s, Configuration const& c) {
  std::int64_t r = rows_of(s), e = r * cols;
  auto g = std::make_shared<Group>(c, e / c.devices, e);
  Box whole{{0, r}, {0, cols}};
  std::vector<Box> pieces;
  for (int k = 0; k < c.devices; ++k) pieces.push_back(row_block(whole, k, c.devices));
  return {[=] { in_process_collectives().all_gather(DType::float32, g->members, pieces); },
          traffic(c, e / c.devices, e), 0};
}

Instance reduce_scatter(Size const& s, Configuration const& c) {
  std::int64_t r = rows_of(s), e = r * cols;
  auto g = std::make_shared<Group>(c, e, e / c.devices);
  Box held{{0, r}, {0, cols}};
  std::vector<Box> pieces;
  for (int k = 0; k < c.devices; ++k) pieces.push_back(row_block(held, k, c.devices));
  return {[=] { in_process_collectives().reduce_scatter(DType::float32, ReduceOp::sum, g->members, held, pieces); },
          traffic(c, e, e / c.devices), static_cast<double>(c.devices - 1) * static_cast<double>(e)};
}

Instance all_to_all(Size const& s, Configuration const& c) {
  // The whole (rows, cols * n) tensor: row blocks in, column blocks out, mb MiB each.
  std::int64_t r = rows_of(s), n = c.devices, e = r * cols;
  Box whole{{0, r}, {0, cols * n}};
  std::vector<Box> in_boxes, out_boxes;
  for (int k = 0; k < n; ++k) {
    in_boxes.push_back(row_block(whole, k, static_cast<int>(n)));
    out_boxes.push_back(Box{{0, r}, {cols * k, cols * (k + 1)}});
  }
  auto g = std::make_shared<Group>(c, e, e);
  return {[=] { in_process_collectives().all_to_all(DType::float32, g->members, in_boxes, out_boxes); },
          traffic(c, e, e), 0};
}

std::vector<Workload> const registry = {
    {"fused_chain", "tanh(a * x + b) * 0.5 - x / 3 on n float32, 1-D over every device", Bound::memory,
     {{"n", std::int64_t{1} << 22}}, check_elements, fused_chain},
    {"softmax", "softmax over the last axis of (rows, cols) float32, rows sharded", Bound::memory,
     {{"rows", 2048}, {"cols", 1024}}, check_rows, softmax_rows},
    {"layer_norm_gelu", "gelu(layer norm) over the last axis of (rows, cols), rows sharded", Bound::memory,
     {{"rows", 2048}, {"cols", 1024}}, check_rows, layer_norm_gelu},
    {"rms_norm", "flax's RMSNorm over the last axis of (rows, cols), rows sharded", Bound::memory,
     {{"rows", 2048}, {"cols", 1024}}, check_rows, rms_norm_rows},
    {"megatron_mlp", "relu(x @ W1) @ W2: x over dp, W1 columns and W2 rows over mp", Bound::compute,
     {{"batch", 1024}, {"model", 512}, {"hidden", 2048}}, check_mlp, megatron_mlp},
    {"attention", "causal self-attention, q, k, v of (batch, seq, heads, head_dim): batch over dp, heads over mp",
     Bound::compute, {{"batch", 8}, {"seq", 256}, {"heads", 8}, {"head_dim", 64}}, check_heads, attention},
    {"transformer", "one pre-norm transformer layer (attention + MLP, Megatron sharding over dp, mp)",
     Bound::compute, {{"batch", 8}, {"seq", 128}, {"model", 256}, {"heads", 8}, {"hidden", 1024}}, check_transformer,
     transformer},
    {"all_reduce", "in-process all-reduce (sum) over every device, mb MiB each", Bound::collective,
     {{"mb", 8}}, check_collective, all_reduce},
    {"all_gather", "in-process all-gather of row blocks into mb MiB per device", Bound::collective,
     {{"mb", 8}}, check_collective, all_gather},
    {"reduce_scatter", "in-process reduce-scatter (sum) of mb MiB per device", Bound::collective,
     {{"mb", 8}}, check_collective, reduce_scatter},
    {"all_to_all", "in-process all-to-all: mb MiB of rows in, mb MiB of columns out per device", Bound::collective,
     {{"mb", 8}}, check_collective, all_to_all},
    {"fused_chain_bf16", "the fused chain on n bfloat16 (computed in float32, every op rounded)", Bound::memory,
     {{"n", std::int64_t{1} << 22}}, check_elements, fused_chain<bfloat16>},
    {"softmax_bf16", "softmax over the last axis of (rows, cols) bfloat16, rows sharded", Bound::memory,
     {{"rows", 2048}, {"cols", 1024}}, check_rows, softmax_rows<bfloat16>},
    {"layer_norm_gelu_bf16", "gelu(layer norm) over the last axis of (rows, cols) bfloat16, rows sharded",
     Bound::memory, {{"rows", 2048}, {"cols", 1024}}, check_rows, layer_norm_gelu<bfloat16>},
};

}  // namespace

char const* fom_unit(Bound bound) { return bound == Bound::compute ? "GFLOP/s" : "GB/s"; }

char const* limit_name(Bound bound) {
  return bound == Bound::memory ? "stream_triad" : bound == Bound::compute ? "blas_sgemm" : "copy";
}

std::span<Workload const> workloads() { return registry; }

Workload const* find_workload(std::string_view name) {
  for (auto const& w : registry)
    if (w.name == name) return &w;
  return nullptr;
}

std::string workload_names() {
  std::string s;
  for (auto const& w : registry) s += (s.empty() ? "" : ", ") + std::string(w.name);
  return s;
}

}  // namespace tessel::study
