#pragma once
// Placing data on devices (jax.device_put) and building tensors shard by shard
// (jax.make_array_from_callback).
#include <concepts>
#include <algorithm>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "tessel/runtime/tensor.hpp"

namespace tessel {

// Host data whose element type is known only at run time, so that asking for another dtype than
// the data has is a clear error, not a reinterpretation of bytes.
class HostData {
 public:
  template <Element U>
  HostData(std::span<U const> s) : bytes_{s.data(), s.size(), dtype_of<U>} {}  // NOLINT: implicit by design
  template <Element U>
  HostData(std::span<U> s) : bytes_{s.data(), s.size(), dtype_of<U>} {}  // NOLINT
  template <Element U>
  HostData(std::vector<U> const& v) : HostData(std::span<U const>(v)) {}  // NOLINT
  // std::vector<bool> packs bits: its values are copied into bytes, which this holds.
  HostData(std::vector<bool> const& v)  // NOLINT
      : owned_(std::make_shared<bool[]>(v.size())), bytes_{owned_.get(), v.size(), DType::bool_} {
    std::copy(v.begin(), v.end(), owned_.get());
  }
  [[nodiscard]] detail::HostBytes bytes() const { return bytes_; }

 private:
  std::shared_ptr<bool[]> owned_;
  detail::HostBytes bytes_;
};

// Places row-major host data of the given global shape with the given sharding. The element type
// is the data's, or T when given; they must agree.
template <Element T>
Tensor<T> device_put(HostData host, Shape const& shape, NamedSharding const& sharding) {
  return Tensor<T>(detail::place(host.bytes(), shape, dtype_of<T>, sharding));
}
template <Element T>
Tensor<T> device_put(std::vector<T> const& host, Shape const& shape, NamedSharding const& sharding) {
  return device_put<T>(HostData(host), shape, sharding);
}
template <Element T>
Tensor<T> device_put(std::span<T const> host, Shape const& shape, NamedSharding const& sharding) {
  return device_put<T>(HostData(host), shape, sharding);
}
// On the default device (device 0), as jnp.asarray does before any sharding is chosen.
template <Element T>
Tensor<T> device_put(std::vector<T> const& host, Shape const& shape) {
  return device_put<T>(HostData(host), shape, detail::single_device_sharding());
}

// Moves a tensor to another sharding of the same devices (resharding); the source is unchanged.
// Returns the same tensor when the sharding is already the requested one.
template <Element T>
Tensor<T> device_put(Tensor<T> const& x, NamedSharding const& sharding) {
  if (x.sharding() == sharding) return x;
  return Tensor<T>(detail::recorded_reshard(x.impl_ptr(), sharding));
}

// Builds a tensor without materializing it whole: fill(index, block) is called once per distinct
// shard this process holds, with the global index range and a row-major host buffer of that
// shard's shape to fill (jax.make_array_from_callback).
template <Element T, class Fill>
  requires std::invocable<Fill&, Box const&, std::span<T>>
Tensor<T> make_array_from_callback(Shape const& shape, NamedSharding const& sharding, Fill&& fill) {
  return Tensor<T>(detail::from_callback(shape, dtype_of<T>, sharding, [&](Box const& index, void* block) {
    fill(index, std::span<T>(static_cast<T*>(block), static_cast<std::size_t>(index.num_elements())));
  }));
}

// jax.make_array_from_process_local_data: each process passes only its part of the global array,
// row-major over the bounding box of the shards it holds (the whole array for a process holding
// them all); every process calls it. A size that does not fit is an error naming the box.
template <Element T>
Tensor<T> make_array_from_process_local_data(NamedSharding const& sharding, std::span<T const> local,
                                             Shape const& global_shape) {
  return Tensor<T>(detail::place_process_local(detail::HostBytes{local.data(), local.size(), dtype_of<T>},
                                               global_shape, dtype_of<T>, sharding));
}
template <Element T>
Tensor<T> make_array_from_process_local_data(NamedSharding const& sharding, std::vector<T> const& local,
                                             Shape const& global_shape) {
  HostData data(local);
  return Tensor<T>(detail::place_process_local(data.bytes(), global_shape, dtype_of<T>, sharding));
}

}  // namespace tessel
