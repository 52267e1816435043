#pragma once
// Counts heap allocations: a replacement of the global operator new (every form, or a sanitizer's
// own operator new meets this operator delete). Include it in exactly one file of a binary (a
// test or a benchmark of its own); allocations() is the count so far.
#include <atomic>
#include <cstdlib>
#include <new>

// nvcc compiles the replaceable operator new for the device too, where nothing can throw (and
// nothing calls it): there a failed allocation traps.
#ifdef __CUDA_ARCH__
#define TESSEL_TEST_BAD_ALLOC() __trap()
#else
#define TESSEL_TEST_BAD_ALLOC() throw std::bad_alloc()
#endif

namespace tessel::test {
inline std::atomic<long> allocation_count{0};
inline long allocations() { return allocation_count.load(std::memory_order_relaxed); }
}  // namespace tessel::test

void* operator new(std::size_t n) {
  tessel::test::allocation_count.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(n ? n : 1)) return p;
  TESSEL_TEST_BAD_ALLOC();
}
void* operator new(std::size_t n, std::align_val_t a) {
  tessel::test::allocation_count.fetch_add(1, std::memory_order_relaxed);
  std::size_t al = static_cast<std::size_t>(a);
  if (void* p = std::aligned_alloc(al, (n + al - 1) / al * al)) return p;
  TESSEL_TEST_BAD_ALLOC();
}
void* operator new(std::size_t n, std::nothrow_t const&) noexcept {
  tessel::test::allocation_count.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n ? n : 1);
}
void* operator new(std::size_t n, std::align_val_t a, std::nothrow_t const&) noexcept {
  tessel::test::allocation_count.fetch_add(1, std::memory_order_relaxed);
  std::size_t al = static_cast<std::size_t>(a);
  return std::aligned_alloc(al, (n + al - 1) / al * al);
}
void operator delete(void* p, std::nothrow_t const&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, std::nothrow_t const&) noexcept { std::free(p); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
