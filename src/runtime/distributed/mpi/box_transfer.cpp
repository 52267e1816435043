// Boxes moved between processes, straight from the sender's buffer into the receiver's: a
// contiguous region as bytes, a strided one as an MPI subarray datatype on both sides (MPI packs
// and unpacks as it moves, with no staging buffer of ours). Messages go over the communicator of
// the collective's processes (communicators.cpp), at most 1 GiB each (MPI counts are ints).
// When the MPI cannot read device memory (stages_through_host), each message goes through pinned
// host memory instead: packed there by a box copy on the device, sent as bytes, received as bytes,
// and unpacked by one batched box copy when the transfer completes.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <format>
#include <memory>
#include <optional>
#include <vector>

#include <Kokkos_Core.hpp>

#include "tessel/core/error.hpp"
#include "tessel/runtime/block_copy.hpp"
#include "tessel/runtime/stream.hpp"
#include "tessel/runtime/device.hpp"
#include "tessel/runtime/distributed.hpp"
#include "tessel/runtime/run_plan.hpp"
#include "mpi_wait.hpp"
#include "../world.hpp"

namespace tessel::distributed {
namespace {

constexpr int box_tag = 0x7e57;
constexpr std::int64_t max_message = std::int64_t{1} << 30;

// `region` cut along its outer dimensions into boxes of at most `most` elements (whole rows of
// the innermost dimension stay together unless a row alone is larger).
void split(Box const& region, std::int64_t most, std::vector<Box>& out) {
  if (region.num_elements() <= most) return out.push_back(region);
  std::size_t d = 0;
  while (region[d].size() == 1) ++d;
  std::int64_t inner = region.num_elements() / region[d].size();  // elements per index of dimension d
  std::int64_t step = std::max<std::int64_t>(1, most / inner);
  for (std::int64_t i = region[d].start; i < region[d].stop; i += step) {
    Box part = region;
    part[d] = {i, std::min(region[d].stop, i + step)};
    split(part, most, out);
  }
}

// Pinned host buffers for staged messages, lent to one message at a time and kept from call to call
// (pinning memory costs far more than a message). Never freed: freeing after Kokkos ends is not
// allowed, and the process's end returns them.
struct Pinned {
  std::byte* data = nullptr;
  std::size_t bytes = 0;
  bool lent = false;
};
std::vector<Pinned>& pinned_buffers() {
  static std::vector<Pinned> buffers;
  return buffers;
}
std::byte* lend_pinned(std::size_t bytes) {
  using Space = Kokkos::SharedHostPinnedSpace;
  Pinned* spare = nullptr;
  for (auto& p : pinned_buffers()) {
    if (p.lent) continue;
    if (p.bytes >= bytes) {
      p.lent = true;
      return p.data;
    }
    spare = &p;
  }
  if (!spare) spare = &pinned_buffers().emplace_back();
  if (spare->data) Kokkos::kokkos_free<Space>(spare->data);
  spare->data = nullptr;
  spare->bytes = 0;
  spare->data = static_cast<std::byte*>(Kokkos::kokkos_malloc<Space>("tessel::mpi_staging", bytes));
  spare->bytes = bytes;
  spare->lent = true;
  return spare->data;
}
void give_back_pinned(std::byte* data) {
  for (auto& p : pinned_buffers())
    if (p.data == data) p.lent = false;
}

// An element of `size` bytes as MPI sees it: a predefined type where one fits (MPI's fastest
// paths know them), else a committed contiguous type, which `owned` says to free.
MPI_Datatype element_type(std::size_t size, bool& owned) {
  owned = false;
  switch (size) {
    case 1: return MPI_UINT8_T;
    case 2: return MPI_UINT16_T;
    case 4: return MPI_UINT32_T;
    case 8: return MPI_UINT64_T;
    default: break;
  }
  MPI_Datatype t = MPI_DATATYPE_NULL;
  MPI_Type_contiguous(static_cast<int>(size), MPI_BYTE, &t);
  MPI_Type_commit(&t);
  owned = true;
  return t;
}

// The element type for one call, freed at its end.
struct Element {
  bool owned = false;
  MPI_Datatype type;
  explicit Element(std::size_t size) : type(element_type(size, owned)) {}
  ~Element() {
    if (owned) MPI_Type_free(&type);
  }
  Element(Element const&) = delete;
  Element& operator=(Element const&) = delete;
};

}  // namespace

struct BoxTransfer::State {
  MPI_Comm comm = MPI_COMM_NULL;
  std::vector<MPI_Request> requests;
  std::vector<MPI_Datatype> types;
  std::optional<Element> element;
  bool staged = stages_through_host();
  std::vector<std::byte*> lent;  // pinned buffers of this transfer's staged messages
  detail::CopyBatch unpack;      // staged receives, from their pinned buffers into the receivers'
  ~State() {
    for (std::byte* p : lent) give_back_pinned(p);
  }
};

BoxTransfer::BoxTransfer(std::vector<int> processes, std::size_t element_size, char const* what)
    : processes_(std::move(processes)), element_(element_size), what_(what), state_(std::make_unique<State>()) {
  state_->comm = communicator(processes_);
  state_->element.emplace(element_);
}

BoxTransfer::~BoxTransfer() {
  // An exception between posting and wait(): the buffers are about to go, so cancel what is
  // pending (a receive whose send never comes would otherwise wait for ever).
  for (auto& r : state_->requests) {
    MPI_Cancel(&r);
    MPI_Wait(&r, MPI_STATUS_IGNORE);
  }
  for (auto& t : state_->types) MPI_Type_free(&t);
}

int BoxTransfer::rank_of(int process) const {
  auto it = std::lower_bound(processes_.begin(), processes_.end(), process);
  if (it == processes_.end() || *it != process)
    throw Error(std::format("tessel: internal error: process {} is not one of the collective's processes", process));
  return static_cast<int>(it - processes_.begin());
}

namespace {
// The device whose instance packs and unpacks staged messages: this process's first (staging
// happens on GPU backends, where every device reads the others' memory).
Device const& packing_device() { return device(distributed::process_index() * local_device_count()); }
}  // namespace

void BoxTransfer::post(bool sending, int process, std::byte* data, Box const& held, Box const& region) {
  if (region.empty()) return;
  int const peer = rank_of(process);
  std::vector<Box> parts;
  split(region, max_message / static_cast<std::int64_t>(element_), parts);
  for (Box const& part : parts) {
    detail::RunPlan p = detail::plan_runs(held, held, part);
    MPI_Request r = MPI_REQUEST_NULL;
    if (state_->staged) {  // through pinned host memory, laid out as `part`
      auto const bytes = static_cast<std::size_t>(part.num_elements()) * element_;
      std::byte* host = lend_pinned(bytes);
      state_->lent.push_back(host);
      if (sending) {
        Device const& d = packing_device();
        detail::copy_region(d, data, held, host, part, part, element_);
        detail::fence_device(d);  // packed before MPI reads it
        MPI_Isend(host, static_cast<int>(bytes), MPI_BYTE, peer, box_tag, state_->comm, &r);
      } else {
        MPI_Irecv(host, static_cast<int>(bytes), MPI_BYTE, peer, box_tag, state_->comm, &r);
        std::byte* const receivers[] = {data};
        state_->unpack.add(host, part, held, part, receivers);
      }
    } else if (p.runs == 1) {  // contiguous: plain bytes (MPI's single-copy paths need them)
      std::byte* at = data + static_cast<std::size_t>(p.src_base) * element_;
      int bytes = static_cast<int>(p.run_length * static_cast<std::int64_t>(element_));
      if (sending) MPI_Isend(at, bytes, MPI_BYTE, peer, box_tag, state_->comm, &r);
      else MPI_Irecv(at, bytes, MPI_BYTE, peer, box_tag, state_->comm, &r);
    } else {
      int const rank = static_cast<int>(held.size());
      std::vector<int> sizes(static_cast<std::size_t>(rank)), subsizes(sizes), starts(sizes);
      for (std::size_t d = 0; d < held.size(); ++d) {
        if (held[d].size() > INT_MAX)
          throw Error(std::format("tessel: a box {} with a dimension of more than {} elements cannot cross processes",
                                  to_string(held), INT_MAX));
        sizes[d] = static_cast<int>(held[d].size());
        subsizes[d] = static_cast<int>(part[d].size());
        starts[d] = static_cast<int>(part[d].start - held[d].start);
      }
      MPI_Datatype t = MPI_DATATYPE_NULL;
      MPI_Type_create_subarray(rank, sizes.data(), subsizes.data(), starts.data(), MPI_ORDER_C, state_->element->type, &t);
      MPI_Type_commit(&t);
      state_->types.push_back(t);
      if (sending) MPI_Isend(data, 1, t, peer, box_tag, state_->comm, &r);
      else MPI_Irecv(data, 1, t, peer, box_tag, state_->comm, &r);
    }
    state_->requests.push_back(r);
  }
}

void BoxTransfer::wait() {
  if (!state_->requests.empty()) wait_or_abort(state_->requests, what_);
  state_->requests.clear();
  if (!state_->unpack.tasks().empty()) {
    Device const& d = packing_device();
    state_->unpack.launch(d, element_);
    detail::fence_device(d);  // the receivers hold their regions, and the pinned buffers are free again
  }
  for (std::byte* p : state_->lent) give_back_pinned(p);
  state_->lent.clear();
  for (auto& t : state_->types) MPI_Type_free(&t);
  state_->types.clear();
}

void BoxTransfer::send(int process, std::byte const* data, Box const& held, Box const& region) {
  post(true, process, const_cast<std::byte*>(data), held, region);
}

void BoxTransfer::receive(int process, std::byte* data, Box const& held, Box const& region) {
  post(false, process, data, held, region);
}

}  // namespace tessel::distributed

namespace tessel::distributed {

bool all_gather_ranges(std::vector<int> const& processes, std::byte const* send, std::byte* out,
                       std::size_t element_size, std::vector<std::int64_t> const& counts,
                       std::vector<std::int64_t> const& displacements, char const* what) {
  if (stages_through_host()) return false;  // MPI's collectives would read device memory
  std::vector<int> c(counts.size()), d(counts.size());
  for (std::size_t p = 0; p < counts.size(); ++p) {
    if (counts[p] > INT_MAX || displacements[p] > INT_MAX) return false;  // MPI counts are ints
    c[p] = static_cast<int>(counts[p]);
    d[p] = static_cast<int>(displacements[p]);
  }
  Element const e(element_size);
  MPI_Datatype const element = e.type;
  MPI_Comm const comm = communicator(processes);
  // Equal parts in process order: MPI_Allgather itself (MPI's tuned algorithms for it); else the
  // v variant. Blocking calls (MPI's nonblocking collectives take other, slower algorithms), so
  // under the watchdog thread.
  bool regular = true;
  for (std::size_t p = 0; p < c.size(); ++p) regular = regular && c[p] == c[0] && d[p] == static_cast<int>(p) * c[0];
  auto const mine = static_cast<std::size_t>(std::lower_bound(processes.begin(), processes.end(), process_index()) -
                                             processes.begin());
  void const* from = send ? static_cast<void const*>(send) : MPI_IN_PLACE;
  int const sent = send ? c[mine] : 0;
  MPI_Datatype const sent_type = send ? element : MPI_DATATYPE_NULL;
  call_or_abort(what, [&] {
    if (regular) MPI_Allgather(from, sent, sent_type, out, c[0], element, comm);
    else MPI_Allgatherv(from, sent, sent_type, out, c.data(), d.data(), element, comm);
  });
  return true;
}

bool all_to_all_runs(std::vector<int> const& processes, std::byte const* in, std::byte* out, std::size_t element_size,
                     std::vector<std::int64_t> const& send_counts, std::vector<std::int64_t> const& send_starts,
                     std::vector<std::int64_t> const& receive_counts, std::vector<std::int64_t> const& receive_starts,
                     char const* what) {
  auto ints = [](std::vector<std::int64_t> const& v, std::vector<int>& out) {
    for (auto x : v) {
      if (x > INT_MAX) return false;  // MPI counts are ints
      out.push_back(static_cast<int>(x));
    }
    return true;
  };
  if (stages_through_host()) return false;  // MPI's collectives would read device memory
  std::vector<int> sc, sd, rc, rd;
  if (!ints(send_counts, sc) || !ints(send_starts, sd) || !ints(receive_counts, rc) || !ints(receive_starts, rd))
    return false;
  Element const e(element_size);
  MPI_Datatype const element = e.type;
  MPI_Comm const comm = communicator(processes);
  // Equal parts in process order on both sides: MPI_Alltoall itself (its tuned algorithms); else
  // the v variant. Blocking, under the watchdog thread (as all_gather_in_place).
  bool regular = true;
  for (std::size_t p = 0; p < sc.size(); ++p)
    regular = regular && sc[p] == sc[0] && rc[p] == sc[0] && sd[p] == static_cast<int>(p) * sc[0] &&
              rd[p] == static_cast<int>(p) * sc[0];
  call_or_abort(what, [&] {
    if (regular) MPI_Alltoall(in, sc[0], element, out, sc[0], element, comm);
    else MPI_Alltoallv(in, sc.data(), sd.data(), element, out, rc.data(), rd.data(), element, comm);
  });
  return true;
}

}  // namespace tessel::distributed
