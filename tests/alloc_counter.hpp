// tests/alloc_counter.hpp: counts heap allocations, for the tests that prove a step allocates
// nothing.
//
// Two mechanisms, because Eigen does not allocate through operator new (its aligned_malloc calls
// std::malloc directly):
//   - allocation_count(): calls of the global operator new, every form (plain, array, nothrow,
//     aligned). Counted only in the one source file per program that defines
//     HOOKFUSE_DEFINE_ALLOC_COUNTER before including this header: that file replaces the global
//     operator new and delete (malloc-based). Elsewhere the count stays 0.
//   - eigen_malloc_count(): Eigen heap allocations attempted while they are forbidden. This
//     header defines EIGEN_RUNTIME_NO_MALLOC and its own eigen_assert before including Eigen, so
//     it must come before any Eigen header in the file. NoAllocScope forbids them for its
//     lifetime; a forbidden allocation is recorded (and still performed) instead of aborting.
//     Every other Eigen assertion fails as usual (message, abort), even under NDEBUG.
//
//     {
//       hookfuse_test::NoAllocScope scope;
//       step();                                   // no Catch2 assertions in here: they allocate
//       news = scope.news(); eigen = scope.eigen_mallocs();
//     }
//     CHECK(news == 0); CHECK(eigen == 0);
#pragma once

#if defined(EIGEN_WORLD_VERSION)
#error "alloc_counter.hpp configures Eigen's malloc check: include it before any Eigen header"
#endif

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace hookfuse_test {
namespace alloc_detail {
inline std::atomic<std::size_t> allocations{0};
inline std::atomic<std::size_t> eigen_mallocs{0};

/// eigen_assert's failure path: records a forbidden heap allocation, aborts on anything else.
inline void eigen_assert_failed(const char* expr, const char* file, int line) {
  if (std::strstr(expr, "heap allocation is forbidden") != nullptr) {
    eigen_mallocs.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  std::fprintf(stderr, "%s:%d: Eigen assertion failed: %s\n", file, line, expr);
  std::abort();
}
}  // namespace alloc_detail

/// Calls of the global operator new so far (0 unless HOOKFUSE_DEFINE_ALLOC_COUNTER is defined in
/// some source file of the program).
inline std::size_t allocation_count() {
  return alloc_detail::allocations.load(std::memory_order_relaxed);
}
/// Eigen heap allocations attempted while forbidden (inside a NoAllocScope) so far.
inline std::size_t eigen_malloc_count() {
  return alloc_detail::eigen_mallocs.load(std::memory_order_relaxed);
}
}  // namespace hookfuse_test

#define EIGEN_RUNTIME_NO_MALLOC 1
#define eigen_assert(x)       \
  (static_cast<bool>(x)       \
       ? static_cast<void>(0) \
       : ::hookfuse_test::alloc_detail::eigen_assert_failed(#x, __FILE__, __LINE__))

#include "hookfuse/detail/eigen.hpp"  // Eigen, GCC 12 AVX-512 false positive silenced

namespace hookfuse_test {

/// Forbids Eigen heap allocations for its lifetime and counts both kinds of allocation from its
/// construction on. Not nestable.
class NoAllocScope {
 public:
  NoAllocScope() : news_(allocation_count()), eigen_(eigen_malloc_count()) {
    Eigen::internal::set_is_malloc_allowed(false);
  }
  ~NoAllocScope() { Eigen::internal::set_is_malloc_allowed(true); }
  NoAllocScope(const NoAllocScope&) = delete;
  NoAllocScope& operator=(const NoAllocScope&) = delete;

  /// operator new calls since construction.
  std::size_t news() const { return allocation_count() - news_; }
  /// Eigen heap allocations since construction.
  std::size_t eigen_mallocs() const { return eigen_malloc_count() - eigen_; }

 private:
  std::size_t news_;
  std::size_t eigen_;
};

/// The heap allocations {operator new calls, Eigen mallocs} while f() runs in a NoAllocScope
/// (f must not make Catch2 assertions: they allocate).
struct Allocations {
  std::size_t news = 0;
  std::size_t eigen_mallocs = 0;
};
template <class F>
Allocations allocations_of(F&& f) {
  NoAllocScope scope;
  f();
  return {scope.news(), scope.eigen_mallocs()};
}

}  // namespace hookfuse_test

#ifdef HOOKFUSE_DEFINE_ALLOC_COUNTER
// Replacements of every global operator new and delete ([new.delete]); all memory comes from
// std::malloc / std::aligned_alloc and goes back through std::free.
namespace hookfuse_test::alloc_detail {
inline void* counted_malloc(std::size_t n) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(n == 0 ? 1 : n);
}
inline void* counted_aligned_alloc(std::size_t n, std::align_val_t align) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  std::size_t a = static_cast<std::size_t>(align);
  if (a < sizeof(void*)) a = sizeof(void*);
  const std::size_t size = n == 0 ? a : (n + a - 1) / a * a;  // a multiple of the alignment
  return std::aligned_alloc(a, size);
}
inline void* or_throw(void* p) {
  if (p == nullptr) throw std::bad_alloc();
  return p;
}
}  // namespace hookfuse_test::alloc_detail

void* operator new(std::size_t n) {
  return hookfuse_test::alloc_detail::or_throw(hookfuse_test::alloc_detail::counted_malloc(n));
}
void* operator new[](std::size_t n) {
  return hookfuse_test::alloc_detail::or_throw(hookfuse_test::alloc_detail::counted_malloc(n));
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return hookfuse_test::alloc_detail::counted_malloc(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return hookfuse_test::alloc_detail::counted_malloc(n);
}
void* operator new(std::size_t n, std::align_val_t a) {
  return hookfuse_test::alloc_detail::or_throw(
      hookfuse_test::alloc_detail::counted_aligned_alloc(n, a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return hookfuse_test::alloc_detail::or_throw(
      hookfuse_test::alloc_detail::counted_aligned_alloc(n, a));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return hookfuse_test::alloc_detail::counted_aligned_alloc(n, a);
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return hookfuse_test::alloc_detail::counted_aligned_alloc(n, a);
}

// These replacements pair malloc with free on purpose. GCC 12 (seen at -O1 with the sanitizers,
// HOOKFUSE_SANITIZE) inlines a replaced operator delete into a caller of operator new and reports
// "free called on pointer returned from a mismatched allocation function": silenced for the
// free calls below only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif  // HOOKFUSE_DEFINE_ALLOC_COUNTER
