#include "tessel/runtime/tensor_impl.hpp"

#include <algorithm>
#include <format>
#include <string>

#include "tessel/core/error.hpp"
#include "tessel/runtime/block_copy.hpp"
#include "tessel/runtime/buffer_pool.hpp"
#include "tessel/runtime/reshard.hpp"

namespace tessel::detail {
namespace {

constexpr bool host_accessible = Kokkos::SpaceAccessibility<ExecSpace, Kokkos::HostSpace>::accessible;

// For each mesh position, the first position holding the same box: data is moved into that one
// and replicas are copied from it, so replicated shards cost one transfer from the host.
std::vector<std::size_t> first_holders(TensorImpl const& t) {
  std::vector<std::size_t> first(t.shards.size());
  for (std::size_t i = 0; i < t.shards.size(); ++i) {
    first[i] = i;
    for (std::size_t j = 0; j < i; ++j)
      if (t.shards[j].index == t.shards[i].index) {
        first[i] = j;
        break;
      }
  }
  return first;
}

void copy_replicas(TensorImpl& t, std::vector<std::size_t> const& first) {
  fence_all_devices();
  for (std::size_t i = 0; i < t.shards.size(); ++i)
    if (first[i] != i) Kokkos::deep_copy(device(t.shards[i].device).exec, t.shards[i].bytes, t.shards[first[i]].bytes);
  fence_all_devices();
}

void check_host_data(char const* what, HostBytes const& host, Shape const& shape, DType dtype) {
  if (host.dtype != dtype)
    throw Error(std::format("{}: host data is {} but the tensor is {}", what, name(host.dtype), name(dtype)));
  if (static_cast<std::int64_t>(host.count) != shape.num_elements())
    throw Error(std::format("{}: host data has {} elements but shape {} needs {}", what, host.count, to_string(shape),
                            shape.num_elements()));
}


}  // namespace

void throw_null_tensor() { throw Error("tessel::Tensor: built from a null TensorImpl"); }

std::size_t TensorImpl::shard_bytes() const {
  return static_cast<std::size_t>(sharding.shard_shape(shape).num_elements()) * size_of(dtype);
}

std::shared_ptr<TensorImpl> TensorImpl::allocate(Shape const& shape, DType dtype, NamedSharding const& sharding) {
  sharding.check_shape(shape);
  auto t = std::make_shared<TensorImpl>(TensorImpl{shape, dtype, sharding, {}});
  std::size_t bytes = t->shard_bytes();
  Mesh const& mesh = sharding.mesh();
  for (int flat = 0; flat < mesh.num_devices(); ++flat) {
    int id = mesh.device_id(flat);
    device(id);  // fails clearly for a mesh built before the device count shrank
    std::shared_ptr<std::byte> memory;
    try {
      memory = acquire_device_memory(bytes);
    } catch (OutOfMemory const& e) {
      // The shards allocated so far go back with `t`; the caller's tensors are untouched.
      throw OutOfMemory(std::format("out of memory on device {} for a {} tensor of shape {} sharded {}: each device "
                                    "needs {} bytes ({:.3g} GiB) ({})",
                                    id, name(dtype), to_string(shape), to_string(sharding), bytes,
                                    static_cast<double>(bytes) / (1 << 30), e.what()),
                        e.bytes());
    }
    t->shards.push_back(ShardBuffer{id, sharding.layout().box(shape, flat), ByteView(memory.get(), bytes), memory});
  }
  return t;
}

std::shared_ptr<TensorImpl> place(HostBytes host, Shape const& shape, DType dtype, NamedSharding const& sharding) {
  check_host_data("device_put", host, shape, dtype);
  auto t = TensorImpl::allocate(shape, dtype, sharding);
  auto first = first_holders(*t);
  Box const whole = Box::whole(shape);
  auto const* src = static_cast<std::byte const*>(host.data);
  for (std::size_t i = 0; i < t->shards.size(); ++i) {
    if (first[i] != i) continue;
    ShardBuffer& s = t->shards[i];
    if constexpr (host_accessible) {
      copy_region(device(s.device).exec, src, whole, s.bytes.data(), s.index, s.index, size_of(dtype));
    } else {
      auto staging = Kokkos::create_mirror_view(Kokkos::WithoutInitializing, s.bytes);
      copy_region_on_host(src, whole, staging.data(), s.index, s.index, size_of(dtype));
      HostExecSpace().fence();
      Kokkos::deep_copy(device(s.device).exec, s.bytes, staging);
      device(s.device).exec.fence();  // staging dies at the end of this iteration
    }
  }
  copy_replicas(*t, first);
  return t;
}

void check_reshard_devices(TensorImpl const& source, NamedSharding const& target) {
  Mesh const& from = source.sharding.mesh();
  if (from.num_devices() != 1 && !same_devices(from, target.mesh()))
    throw Error(std::format("device_put: the tensor is on {} but the target sharding {} is on {}; tessel reshards "
                            "only between meshes over the same devices, or from a single device",
                            to_string(from), to_string(target), to_string(target.mesh())));
}

std::shared_ptr<TensorImpl> reshard(TensorImpl const& source, NamedSharding const& target) {
  return reshard_with_collectives(source, target).tensor;
}

std::shared_ptr<TensorImpl> reshard_by_copies(TensorImpl const& source, NamedSharding const& target) {
  check_reshard_devices(source, target);
  auto t = TensorImpl::allocate(source.shape, source.dtype, target);
  auto src_first = first_holders(source);
  for (auto& dst : t->shards) {
    for (std::size_t j = 0; j < source.shards.size(); ++j) {
      if (src_first[j] != j) continue;
      // Read the block from the replica on the destination device when there is one: a local copy.
      ShardBuffer const* src = &source.shards[j];
      for (std::size_t k = j; k < source.shards.size(); ++k)
        if (src_first[k] == j && source.shards[k].device == dst.device) src = &source.shards[k];
      Box region = intersect(src->index, dst.index);
      copy_region(device(dst.device).exec, src->bytes.data(), src->index, dst.bytes.data(), dst.index, region,
                  size_of(source.dtype));
    }
  }
  fence_all_devices();
  return t;
}

void gather(TensorImpl const& source, void* out, std::size_t count, DType dtype) {
  check_host_data("gather", HostBytes{out, count, dtype}, source.shape, source.dtype);
  auto first = first_holders(source);
  Box const whole = Box::whole(source.shape);
  auto* dst = static_cast<std::byte*>(out);
  for (std::size_t i = 0; i < source.shards.size(); ++i) {
    if (first[i] != i) continue;
    ShardBuffer const& s = source.shards[i];
    if constexpr (host_accessible) {
      copy_region(device(s.device).exec, s.bytes.data(), s.index, dst, whole, s.index, size_of(dtype));
    } else {
      auto staging = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.bytes);
      copy_region_on_host(staging.data(), s.index, dst, whole, s.index, size_of(dtype));
      HostExecSpace().fence();
    }
  }
  fence_all_devices();
}

std::shared_ptr<TensorImpl> from_callback(Shape const& shape, DType dtype, NamedSharding const& sharding,
                                          std::function<void(Box const&, void*)> const& fill) {
  auto t = TensorImpl::allocate(shape, dtype, sharding);
  auto first = first_holders(*t);
  for (std::size_t i = 0; i < t->shards.size(); ++i) {
    if (first[i] != i) continue;
    ShardBuffer& s = t->shards[i];
    // On host backends the mirror is the shard itself, so the callback writes in place.
    auto staging = Kokkos::create_mirror_view(Kokkos::WithoutInitializing, s.bytes);
    fill(s.index, staging.data());
    Kokkos::deep_copy(device(s.device).exec, s.bytes, staging);
    device(s.device).exec.fence();
  }
  copy_replicas(*t, first);
  return t;
}

}  // namespace tessel::detail
