#pragma once
// Many processes, one program (JAX's multi-controller model, jax.distributed): every process runs
// the same code on its own devices, and the plans' collectives cross processes over MPI.
//
// Devices have global ids, ordered by process then local id (jax.devices()): process p holds ids
// p * L .. p * L + L - 1, where L = TESSEL_NUM_DEVICES (the same in every process). A mesh may
// span processes; a tensor on it holds only the shards of this process's devices (its
// addressable shards), and every process runs every instruction of a plan on its own shards.
//
// Under mpirun or srun (Open MPI's or PMIx's environment variables), the first ScopeGuard calls
// initialize() itself; a build without MPI (or a run outside a launcher) is one process.
#include <cstddef>
#include <memory>
#include <vector>

#include "tessel/runtime/tensor.hpp"

namespace tessel::distributed {

// Starts MPI (if it is not started yet) and agrees on the process count and each process's local
// device count; fails on every process, naming the processes, when their device counts differ.
// Idempotent. The ScopeGuard's end finalizes MPI if initialize() started it.
void initialize();
// Whether this process is one of several (initialize() ran with more than one process).
bool is_initialized();
// jax.process_index() / jax.process_count(): 0 and 1 for a single process.
int process_index();
int process_count();
// The global ids of this process's devices (jax.local_devices()) and of every device (jax.devices()).
std::vector<int> local_devices();
std::vector<int> devices();
// Which process holds the device with this global id.
int process_of(int device_id);

}  // namespace tessel::distributed

namespace tessel {
namespace detail {
// Every shard's block, from the process holding it, into `out` (the whole tensor, row-major) on
// every process.
void process_allgather(TensorImpl const& source, void* out, std::size_t count);
}  // namespace detail

// The whole tensor on every process, row-major (jax.experimental.multihost_utils.process_allgather):
// what to_host gives for a tensor that is not fully addressable. Every process must call it.
template <Element T>
std::vector<T> process_allgather(Tensor<T> const& t) {
  auto const n = static_cast<std::size_t>(t.size());
  if constexpr (std::same_as<T, bool>) {  // std::vector<bool> packs bits: gathered as bytes first
    auto bytes = std::make_unique<bool[]>(n);
    detail::process_allgather(t.impl(), bytes.get(), n);
    return std::vector<bool>(bytes.get(), bytes.get() + n);
  } else {
    std::vector<T> out(n);
    detail::process_allgather(t.impl(), out.data(), n);
    return out;
  }
}
}  // namespace tessel
