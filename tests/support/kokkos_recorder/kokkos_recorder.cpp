// tessel_kokkos_recorder: a real Kokkos Tools library, dlopened by Kokkos, that records the events
// of a test process, one line per event, in the file named by TESSEL_RECORDER_OUT.
//
// Loading (checked against Kokkos 5.2.2): Kokkos::initialize() dlopens the library named by
// KOKKOS_TOOLS_LIBS (or --kokkos-tools-libs=) with RTLD_NOW | RTLD_GLOBAL. The old
// KOKKOS_PROFILE_LIBRARY still works but warns that it is deprecated, and Kokkos aborts when both
// are set and differ. When the library cannot be loaded, Kokkos prints an error and goes on without
// it: Kokkos::Tools::profileLibraryLoaded() is then false and nothing is recorded. Events before
// Kokkos::initialize() and after Kokkos::finalize() are not seen.
//
// Line format (names exactly as Kokkos passes them; the library adds nothing):
//   region <name>      Kokkos::Profiling::pushRegion(name), also Kokkos::Profiling::ScopedRegion
//   end                Kokkos::Profiling::popRegion(), also the end of a ScopedRegion
//   for <name>         begin of a parallel_for
//   reduce <name>      begin of a parallel_reduce
//   scan <name>        begin of a parallel_scan
//   copy <dst>-><src>  begin of a deep_copy: destination label, then source label (Kokkos' order)
// Ends of kernels and copies, fences, allocations and the rest are not recorded.
//
// What Kokkos 5.2.2 passes:
// - A named kernel ("k1") arrives unchanged. An unnamed one gets its name from
//   Kokkos::Impl::ParallelConstructName (Kokkos_ExecPolicy.hpp): the functor's type name, plus
//   "/<tag type>" when the policy has a work tag. Kokkos_TypeInfo.hpp defines
//   KOKKOS_ENABLE_IMPL_TYPEINFO (everywhere but NVCC+MSVC), so these are demangled, compiler-made
//   names, not typeid().name(): with GCC 14, "F", "F/Tag", "main(int, char**)::<lambda(int)>".
// - Kokkos adds kernels of its own: allocating an initialized View("x", n) of a trivial type gives
//   "for Kokkos::View::initialization [x] via memset" (no event WithoutInitializing; a type that
//   needs construction/destruction gives "Kokkos::View::initialization [x]" and
//   "Kokkos::View::destruction [x]"); deep_copy(view, scalar) gives "copy x->Scalar" then
//   "for Kokkos::ViewFill-1D"; deep_copy(scalar, rank-0 view x) gives "copy Scalar->x"; a
//   deep_copy of a View onto itself (create_mirror_view on the host) still gives "copy x->x";
//   create_mirror(x) allocates "x_mirror". Match the lines a test cares about, or control every
//   Kokkos call in the process.
//
// Output: lines are buffered in memory (under a mutex: kernels may be launched from several host
// threads) and appended to the file at every popRegion, at kokkosp_finalize_library and by
// tessel_recorder_flush(); a test can read the file while the process still runs. Because Kokkos
// loads the library RTLD_GLOBAL, a test reaches the flush without linking the library:
//   auto flush = reinterpret_cast<void (*)()>(dlsym(RTLD_DEFAULT, "tessel_recorder_flush"));
// The file is truncated when Kokkos initializes the library, so a file left by an earlier run is
// emptied only if the library really loads: a test should check profileLibraryLoaded(), or remove
// the file before Kokkos::initialize(). All processes given one file write to it: for several
// processes (MPI ranks), give each its own TESSEL_RECORDER_OUT.
//
// The C ABI types are declared here, as kokkos-tools' own tools do, so that the library needs no
// Kokkos headers; they mirror impl/Kokkos_Profiling_C_Interface.h (KOKKOSP_INTERFACE_VERSION
// 20240906).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace {

struct Recorder {
  std::mutex mutex;
  std::string path;  // empty: TESSEL_RECORDER_OUT unset, record nothing
  std::string pending;
  std::uint64_t next_id = 0;
};

Recorder& recorder() {
  // Never destroyed, so that a callback that comes during static destruction still finds it.
  static Recorder* r = new Recorder;
  return *r;
}

// Appends the pending lines to the file. Caller holds the mutex.
void flush_locked(Recorder& r) {
  if (r.path.empty() || r.pending.empty()) return;
  if (std::FILE* f = std::fopen(r.path.c_str(), "a")) {
    std::fwrite(r.pending.data(), 1, r.pending.size(), f);
    std::fclose(f);
    r.pending.clear();
  } else {
    std::fprintf(stderr, "tessel_kokkos_recorder: cannot append to '%s'\n", r.path.c_str());
  }
}

// Adds one line "<kind>[ <name>]". Caller holds the mutex.
void append_locked(Recorder& r, const char* kind, const char* name) {
  if (r.path.empty()) return;
  r.pending += kind;
  if (name != nullptr) {
    r.pending += ' ';
    r.pending += name;
  }
  r.pending += '\n';
}

void record(const char* kind, const char* name) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  append_locked(r, kind, name);
}

void begin_kernel(const char* kind, const char* name, std::uint64_t* kernel_id) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  append_locked(r, kind, name);
  if (kernel_id != nullptr) *kernel_id = r.next_id++;
}

}  // namespace

// The entry points must stay visible even if the build turns on -fvisibility=hidden.
#define TESSEL_RECORDER_API __attribute__((visibility("default")))

extern "C" {

struct Kokkos_Profiling_KokkosPDeviceInfo {
  std::size_t deviceID;
};

struct Kokkos_Profiling_SpaceHandle {
  char name[64];
};

TESSEL_RECORDER_API void kokkosp_init_library(const int /*load_seq*/,
                                              const std::uint64_t /*interface_version*/,
                                              const std::uint32_t /*device_info_count*/,
                                              Kokkos_Profiling_KokkosPDeviceInfo* /*device_info*/) {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  const char* out = std::getenv("TESSEL_RECORDER_OUT");
  r.path = out != nullptr ? out : "";
  r.pending.clear();
  if (r.path.empty()) {
    std::fprintf(stderr,
                 "tessel_kokkos_recorder: TESSEL_RECORDER_OUT is not set; recording nothing\n");
    return;
  }
  if (std::FILE* f = std::fopen(r.path.c_str(), "w")) {
    std::fclose(f);
  } else {
    std::fprintf(stderr, "tessel_kokkos_recorder: cannot create '%s'\n", r.path.c_str());
  }
}

TESSEL_RECORDER_API void kokkosp_finalize_library() {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  flush_locked(r);
}

TESSEL_RECORDER_API void tessel_recorder_flush() {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  flush_locked(r);
}

TESSEL_RECORDER_API void kokkosp_begin_parallel_for(const char* name,
                                                    const std::uint32_t /*device_id*/,
                                                    std::uint64_t* kernel_id) {
  begin_kernel("for", name, kernel_id);
}
TESSEL_RECORDER_API void kokkosp_end_parallel_for(const std::uint64_t /*kernel_id*/) {}

TESSEL_RECORDER_API void kokkosp_begin_parallel_reduce(const char* name,
                                                       const std::uint32_t /*device_id*/,
                                                       std::uint64_t* kernel_id) {
  begin_kernel("reduce", name, kernel_id);
}
TESSEL_RECORDER_API void kokkosp_end_parallel_reduce(const std::uint64_t /*kernel_id*/) {}

TESSEL_RECORDER_API void kokkosp_begin_parallel_scan(const char* name,
                                                     const std::uint32_t /*device_id*/,
                                                     std::uint64_t* kernel_id) {
  begin_kernel("scan", name, kernel_id);
}
TESSEL_RECORDER_API void kokkosp_end_parallel_scan(const std::uint64_t /*kernel_id*/) {}

TESSEL_RECORDER_API void kokkosp_push_profile_region(const char* name) {
  record("region", name);
}
TESSEL_RECORDER_API void kokkosp_pop_profile_region() {
  Recorder& r = recorder();
  std::lock_guard<std::mutex> lock(r.mutex);
  append_locked(r, "end", nullptr);
  flush_locked(r);
}

TESSEL_RECORDER_API void kokkosp_begin_deep_copy(Kokkos_Profiling_SpaceHandle /*dst_space*/,
                                                 const char* dst_name, const void* /*dst_ptr*/,
                                                 Kokkos_Profiling_SpaceHandle /*src_space*/,
                                                 const char* src_name, const void* /*src_ptr*/,
                                                 std::uint64_t /*size*/) {
  std::string names = dst_name != nullptr ? dst_name : "";
  names += "->";
  names += src_name != nullptr ? src_name : "";
  record("copy", names.c_str());
}
TESSEL_RECORDER_API void kokkosp_end_deep_copy() {}

}  // extern "C"
