// process_allgather: each distinct block goes from the first process holding it to every other.
#include <algorithm>
#include <format>
#include <vector>

#include "tessel/core/error.hpp"
#include "tessel/runtime/block_copy.hpp"
#include "tessel/runtime/distributed.hpp"
#include "world.hpp"

namespace tessel::detail {

void process_allgather(TensorImpl const& source, void* out, std::size_t count) {
  if (static_cast<std::int64_t>(count) != source.shape.num_elements())
    throw Error(std::format("process_allgather: {} elements for a tensor of shape {} ({} elements)", count,
                            to_string(source.shape), source.shape.num_elements()));
  // Every process takes part, also one that holds every shard (it sends them to the others).
  if (distributed::process_count() == 1) return copy_to_host(source, out, count, source.dtype);
  int const me = distributed::process_index();
  std::size_t const element = size_of(source.dtype);
  Box const whole = Box::whole(source.shape);
  auto* dst = static_cast<std::byte*>(out);
  fence_holders(source);
  distributed::Exchange exchange;
  struct Arrival {
    std::vector<std::byte> bytes;
    Box index;
  };
  std::vector<Arrival> arrivals;
  // What this process sends, in host memory: each shard's host mirror (the shard itself where
  // devices use host memory), alive until the exchange is done.
  std::vector<decltype(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), source.shards[0].bytes))> sent;
  std::vector<Box> seen;
  for (auto const& s : source.shards) {
    if (std::find(seen.begin(), seen.end(), s.index) != seen.end()) continue;
    seen.push_back(s.index);  // the first position holding a block sends it
    std::size_t bytes = static_cast<std::size_t>(s.index.num_elements()) * element;
    if (s.addressable) {
      // One host mirror serves the local copy and the sends (the devices were fenced above).
      auto const& mirror = sent.emplace_back(Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), s.bytes));
      copy_region(HostExecSpace(), mirror.data(), s.index, dst, whole, s.index, element);
      for (int q = 0; q < distributed::process_count(); ++q)
        if (q != me) exchange.send(q, mirror.data(), bytes);
    } else {
      auto& a = arrivals.emplace_back(Arrival{std::vector<std::byte>(bytes), s.index});
      exchange.receive(distributed::process_of(s.device), a.bytes.data(), bytes);
    }
  }
  exchange.wait();
  for (auto const& a : arrivals) copy_region(HostExecSpace(), a.bytes.data(), a.index, dst, whole, a.index, element);
}

}  // namespace tessel::detail
