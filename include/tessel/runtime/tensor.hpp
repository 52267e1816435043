#pragma once
// A sharded tensor (jax.Array): global shape, dtype (the C++ element type), a NamedSharding and
// one shard per mesh device, each a Kokkos view in that device's memory space. Tensors are
// immutable values that share their shards when copied; operations make new tensors.
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "tessel/core/dtype.hpp"
#include "tessel/core/named_sharding.hpp"
#include "tessel/expr/concept.hpp"
#include "tessel/runtime/replay_hooks.hpp"
#include "tessel/runtime/tensor_impl.hpp"

namespace tessel {

namespace detail {
[[noreturn]] void throw_null_tensor();
[[noreturn]] void throw_unset_tensor(DType dtype);
void block_until_ready(TensorImpl const& t);
}

// One device's piece of a tensor (jax.Shard): which device, which global index range, and the
// data, row-major in the shard's own shape. `owner` keeps the memory alive as long as the Shard.
// The data is read-only, as a jax.Array's: replicas on devices that share memory may share it.
template <Element T>
struct Shard {
  int device;
  Box index;
  Shape shape;
  Kokkos::View<T const*, MemSpace, Kokkos::MemoryUnmanaged> data;
  std::shared_ptr<void const> owner;
};

// jnp.matmul, lazily: expr/dot.hpp (Tensor::matmul calls it).
template <class A, class B>
constexpr auto matmul(A const& a, B const& b);

template <Element T>
class Tensor {
 public:
  using value_type = T;

  explicit Tensor(std::shared_ptr<detail::TensorImpl const> impl) : impl_(std::move(impl)) {
    if (!impl_) detail::throw_null_tensor();
  }
  // A tensor to assign later (a member of a struct of weights, say): it holds no value, and any
  // use before an assignment is an Error saying so (torch::Tensor's undefined tensor).
  Tensor() = default;
  // A move copies the handle (one atomic increment), so a moved-from tensor is still the same
  // valid tensor: tensors are immutable shared values, and only a default-constructed one is empty.
  Tensor(Tensor const&) = default;
  Tensor(Tensor&& other) noexcept : impl_(other.impl_) {}
  Tensor& operator=(Tensor const&) = default;
  Tensor& operator=(Tensor&& other) noexcept {
    impl_ = other.impl_;
    return *this;
  }
  ~Tensor() = default;
  // Evaluates an expression (defined in runtime/evaluate.hpp): `Tensor<float> y = relu(x) + 1;`
  template <Expression E>
    requires std::same_as<expr_value_t<E>, T>
  Tensor(E const& e);  // NOLINT: implicit by design
  // An expression of another dtype (an argmax's int32 indices into a Tensor<float>, say): a
  // compile error that says so, not a bare "no conversion".
  template <Expression E>
    requires(!std::same_as<expr_value_t<E>, T>)
  Tensor(E const&) {  // NOLINT: implicit, to be chosen and say why it fails
    static_assert(std::same_as<expr_value_t<E>, T>,
                  "tessel: the expression's dtype is not the tensor's (argmax and argmin give int32, comparisons "
                  "bool): declare the tensor with the expression's dtype, or convert with astype<T>()");
  }

  [[nodiscard]] Shape const& shape() const { return ref().shape; }
  [[nodiscard]] int rank() const { return ref().shape.rank(); }
  [[nodiscard]] std::int64_t size() const { return ref().shape.num_elements(); }
  [[nodiscard]] static constexpr DType dtype() { return dtype_of<T>; }
  [[nodiscard]] NamedSharding const& sharding() const { return ref().sharding; }

  // This process's shards, in mesh order (replicated shards appear once per device holding them).
  [[nodiscard]] std::vector<Shard<T>> addressable_shards() const {
    std::vector<Shard<T>> out;
    detail::note_shard_access();
    detail::block_until_ready(ref());  // (the host may read the data: its writers first)
    for (auto const& s : ref().shards) {
      if (!s.addressable) continue;
      Shape local = s.index.extent();  // a short or empty shard past an uneven dimension's end
      // Shards are stored untyped; the typed view is unmanaged, so the Shard holds the tensor.
      Kokkos::View<T const*, MemSpace, Kokkos::MemoryUnmanaged> typed(reinterpret_cast<T const*>(s.bytes.data()),
                                                                static_cast<std::size_t>(local.num_elements()));
      out.push_back(Shard<T>{s.device, s.index, local, typed, impl_});
    }
    return out;
  }

  // Whether this process holds every shard (jax.Array.is_fully_addressable; always, in one process).
  [[nodiscard]] bool is_fully_addressable() const { return ref().fully_addressable(); }

  // Gathers the whole tensor to the host, row-major; fails when the tensor is not fully addressable
  // (see process_allgather, runtime/distributed.hpp).
  [[nodiscard]] std::vector<T> to_host() const {
    if constexpr (std::same_as<T, bool>) {  // std::vector<bool> packs bits: gathered as bytes first
      auto bytes = std::make_unique<bool[]>(static_cast<std::size_t>(size()));
      copy_to_host(std::span<bool>(bytes.get(), static_cast<std::size_t>(size())));
      return std::vector<bool>(bytes.get(), bytes.get() + size());
    } else {
      std::vector<T> out(static_cast<std::size_t>(size()));
      copy_to_host(out);
      return out;
    }
  }
  // Gathers into caller-provided memory of exactly size() elements.
  void copy_to_host(std::span<T> out) const { detail::copy_to_host(ref(), out.data(), out.size(), dtype()); }

  // self @ b, lazily (jnp.matmul, expr/dot.hpp).
  template <class B>
  auto matmul(B const& b) const {
    return tessel::matmul(*this, b);
  }

  [[nodiscard]] detail::TensorImpl const& impl() const { return ref(); }
  [[nodiscard]] std::shared_ptr<detail::TensorImpl const> const& impl_ptr() const {
    (void)ref();
    return impl_;
  }

  // Waits until the tensor's value is computed on every device holding it
  // (jax.Array.block_until_ready): before stopping a timer, or handing its memory to other code.
  Tensor const& block_until_ready() const {
    detail::block_until_ready(ref());
    return *this;
  }

 private:
  [[nodiscard]] detail::TensorImpl const& ref() const {
    if (!impl_) [[unlikely]]
      detail::throw_unset_tensor(dtype_of<T>);
    return *impl_;
  }
  std::shared_ptr<detail::TensorImpl const> impl_;
};

}  // namespace tessel
