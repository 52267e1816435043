// GEMM operands a host backend keeps packed for its kernels (GemmCall::b_buffer,
// src/runtime/backend/host/packed_operands.hpp): a weight's packed GEMM has the plain GEMM's bits
// on every call and mesh, its copy goes with the tensor, and a buffer rewritten in place (a
// donated cache) is read as it is now, not as it was when packed.
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <vector>

#include "support/data.hpp"
#include "support/meshes.hpp"
#include "tessel/runtime/backend/gemm_batch.hpp"
#include "tessel/runtime/local_dot.hpp"
#include "tessel/tessel.hpp"

using namespace tessel;

namespace {

constexpr std::size_t default_limit = std::size_t{4096} << 20;

// While alive, the backend keeps at most `bytes` of packed operands (0: none, every GEMM plain),
// and float32 GEMMs go to oneDNN where the build has it (which packs; OpenBLAS does not).
class Keeping {
 public:
  explicit Keeping(std::size_t bytes) : f32_(detail::f32_gemm()) {
    detail::limit_kept_operands_for_test(bytes);
    detail::set_f32_gemm(detail::F32Gemm::onednn);
  }
  ~Keeping() {
    detail::limit_kept_operands_for_test(default_limit);
    detail::set_f32_gemm(f32_);
  }
  Keeping(Keeping const&) = delete;
  Keeping& operator=(Keeping const&) = delete;

 private:
  detail::F32Gemm f32_;
};

// Whether this build and CPU keep T's operands: oneDNN runs its GEMMs.
template <class T>
bool keeps() {
  if constexpr (std::is_same_v<T, bfloat16>) return detail::runs_16bit_gemms(DType::bfloat16);
  else return detail::blas_info().f32_gemms.find("oneDNN not found") == std::string::npos;
}

template <class T>
std::vector<T> values(std::int64_t n, unsigned seed) {
  auto const v = test::scattered_values<float>(n, seed, 4);
  return std::vector<T>(v.begin(), v.end());
}

// The kept bytes memory_stats reports, summed over this process's devices: every copy is
// charged to the device whose GEMM made it.
std::int64_t reported_kept_bytes() {
  std::int64_t sum = 0;
  for (int d : distributed::local_devices()) sum += memory_stats(d).kept_operand_bytes;
  return sum;
}

template <class T>
std::vector<T> product(Tensor<T> const& x, Tensor<T> const& w) {
  return Tensor<T>(matmul(x, w)).to_host();
}

}  // namespace

TEMPLATE_TEST_CASE("a weight's packed GEMM has the plain GEMM's bits on every call and mesh", "[runtime][gemm]", float,
                   bfloat16) {
  using T = TestType;
  std::int64_t const k = 512, n = 384;
  // A weight is packed at its second GEMM (packed_operands.hpp); oneDNN's GEMMs of few rows run
  // as blocks of columns (gemm_f32.cpp), each block packed on its own.
  for (std::int64_t rows : {256, 2}) {
    for (auto const& mesh : test::all_meshes()) {
      auto const last = mesh.axes().name(mesh.axes().num_axes() - 1);
      for (auto const& spec : {P(), P(None, last)}) {  // replicated; Megatron's column split
        INFO(to_string(mesh) << " w " << to_string(spec) << " rows " << rows);
        auto const x = device_put(values<T>(rows * k, 1), Shape{rows, k}, NamedSharding(mesh, P()));
        auto const w = device_put(values<T>(k * n, 2), Shape{k, n}, NamedSharding(mesh, spec));
        std::vector<T> plain;
        {
          Keeping none(0);
          plain = product(x, w);
          CHECK(detail::kept_operand_bytes() == 0);
        }
        Keeping all(default_limit);
        for (int call = 0; call < 3; ++call) {
          INFO("call " << call);
          CHECK(test::bitwise_equal(product(x, w), plain));
          if (keeps<T>() && call > 0) CHECK(detail::kept_operand_bytes() > 0);
          CHECK(reported_kept_bytes() == static_cast<std::int64_t>(detail::kept_operand_bytes()));
        }
      }
    }
  }
  CHECK(detail::kept_operand_bytes() == 0);  // every weight died, and its packed copies with it
  CHECK(reported_kept_bytes() == 0);
}

TEMPLATE_TEST_CASE("a donated buffer rewritten in place is multiplied as it is now, not as it was packed",
                   "[runtime][gemm][donate]", float, bfloat16) {
  using T = TestType;
  std::int64_t const rows = 256, k = 64, n = 96;
  Keeping all(default_limit);
  for (auto const& mesh : {make_mesh({1}, {"x"}, {0}), make_mesh({2, 4}, {"a", "b"})}) {
    INFO(to_string(mesh));
    // The columns split over every mesh axis: no replicas (which would make the update copy), and
    // each device's GEMM reads its block in place (a split contraction would gather it first).
    PartitionSpec const spec = mesh.axes().num_axes() == 1 ? P(None, "x") : P(None, {"a", "b"});
    auto const x = device_put(values<T>(rows * k, 3), Shape{rows, k}, NamedSharding(mesh, P()));
    auto cache = device_put(values<T>(k * n, 4), Shape{k, n}, NamedSharding(mesh, spec));
    auto const before = product(x, cache);
    CHECK(test::bitwise_equal(product(x, cache), before));  // (packed at this second read)
    CHECK(test::bitwise_equal(product(x, cache), before));
    if (keeps<T>()) CHECK(detail::kept_operand_bytes() > 0);
    void const* const buffer = cache.impl_ptr()->shards[0].bytes.data();
    auto const rows_in = device_put(values<T>(8 * n, 5), Shape{8, n}, NamedSharding(mesh, spec));
    Tensor<T> updated = eval(lax::dynamic_update_slice_in_dim(donate(cache), rows_in, 16, 0));
    REQUIRE(updated.impl_ptr()->shards[0].bytes.data() == buffer);  // taken in place
    // The product with the updated values in a buffer of their own.
    auto const want = product(x, device_put(updated.to_host(), Shape{k, n}, NamedSharding(mesh, spec)));
    CHECK(!test::bitwise_equal(want, before));
    CHECK(test::bitwise_equal(product(x, updated), want));
    CHECK(test::bitwise_equal(product(x, updated), want));
  }
}
