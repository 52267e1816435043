#pragma once
// Counts heap allocations: a replacement of the global operator new (every form, or a sanitizer's
// own operator new meets this operator delete). Include it in exactly one file of a binary (a
// test or a benchmark of its own); allocations() is the count so far.
#include <atomic>
#include <cstdlib>
#include <new>

namespace tessel::test {
inline std::atomic<long> allocation_count{0};
inline long allocations() { return allocation_count.load(std::memory_order_relaxed); }

// Every form of operator new below: counted, then malloc's memory (`alignment` 0: malloc's own).
inline void* counted_new(std::size_t n, std::size_t alignment, bool nothrow) {
  allocation_count.fetch_add(1, std::memory_order_relaxed);
  n = n ? n : 1;
  void* p = alignment ? std::aligned_alloc(alignment, (n + alignment - 1) / alignment * alignment) : std::malloc(n);
  if (!p && !nothrow) throw std::bad_alloc();
  return p;
}
}  // namespace tessel::test

// nvcc compiles the replaceable operator new for the device too, where nothing calls this one (and
// the counter, exceptions and aligned_alloc do not exist).
#ifdef __CUDA_ARCH__
#define TESSEL_TEST_NEW(n, alignment, nothrow) return nullptr
#else
#define TESSEL_TEST_NEW(n, alignment, nothrow) return tessel::test::counted_new(n, alignment, nothrow)
#endif

void* operator new(std::size_t n) { TESSEL_TEST_NEW(n, 0, false); }
void* operator new(std::size_t n, std::align_val_t a) { TESSEL_TEST_NEW(n, static_cast<std::size_t>(a), false); }
void* operator new(std::size_t n, std::nothrow_t const&) noexcept { TESSEL_TEST_NEW(n, 0, true); }
void* operator new(std::size_t n, std::align_val_t a, std::nothrow_t const&) noexcept {
  TESSEL_TEST_NEW(n, static_cast<std::size_t>(a), true);
}
void operator delete(void* p, std::nothrow_t const&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, std::nothrow_t const&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
