// hookfuse/detail/denormal.hpp: flush denormal floats to zero for the length of a scope, as
// TensorFlow does around every op it runs on a CPU (tensorflow/core/platform/denormal.h,
// port::ScopedFlushDenormal), restoring the caller's floating-point mode afterwards.
//
// What it sets, by architecture (decided by the compiler's target, never by the host's CPU
// model):
//   x86 / x86-64   MXCSR FTZ (bit 15: results below float's or double's normal range become 0)
//                  and DAZ (bit 6: denormal inputs are read as 0); DAZ only where the CPU reports
//                  SSE3, as TensorFlow checks, since setting it elsewhere faults;
//   AArch64        FPCR.FZ (bit 24), both effects for single and double precision;
//   32-bit Arm     FPSCR.FZ (bit 24), on targets with a hardware FPU (Cortex-M4F, ...);
//   anything else  nothing (`supported` is false): denormals are computed as IEEE 754 says
//                  (other compilers than GCC and Clang, 32-bit x86 doing its arithmetic on x87).
// Only the flush bits are restored at the end: exception flags raised inside the scope (an
// overflow, an invalid operation) stay visible to the caller, as with TensorFlow.
// The mode is per thread: only the calling thread's arithmetic is affected.
#pragma once

#include <cstdint>

#if (defined(__x86_64__) || (defined(__i386__) && defined(__SSE2_MATH__))) && defined(__GNUC__)
#include <xmmintrin.h>
#define HOOKFUSE_DENORMAL_X86 1
#elif defined(__aarch64__)
#define HOOKFUSE_DENORMAL_AARCH64 1
#elif defined(__arm__) && defined(__ARM_FP)
#define HOOKFUSE_DENORMAL_ARM32 1
#endif

namespace hookfuse::detail {

/// While alive (and constructed with `enable`), denormal results and inputs of float and double
/// arithmetic on this thread are flushed to zero; the destructor restores the previous mode.
/// Not copyable. Cost: one read and two writes of the control register per scope, or the read
/// alone when the thread's mode already flushes. The mode
/// changes are compiler barriers for memory: arithmetic whose results reach memory inside the
/// scope (every tensor a graph computes) happens in the flushing mode; a value computed and
/// kept only in registers may be moved out of the scope by the compiler, as for any change of
/// the floating-point environment without -frounding-math.
class ScopedFlushDenormal {
 public:
  /// True where this target can flush denormals (see the file comment).
#if defined(HOOKFUSE_DENORMAL_X86) || defined(HOOKFUSE_DENORMAL_AARCH64) || \
    defined(HOOKFUSE_DENORMAL_ARM32)
  static constexpr bool supported = true;
#else
  static constexpr bool supported = false;
#endif

  explicit ScopedFlushDenormal(bool enable) {
    if (!enable) return;
    // When the caller's mode already flushes (a thread that set it once for good), nothing is
    // written: the writes, not the read, are what costs (about 9 ns a scope on x86,
    // bench/README.md).
#if defined(HOOKFUSE_DENORMAL_X86)
    const unsigned csr = _mm_getcsr();
    const unsigned want = csr | changed_x86();
    if (want != csr) {
      saved_ = csr;
      _mm_setcsr(want);
      active_ = true;
    }
    __asm__ __volatile__("" : : : "memory");
#elif defined(HOOKFUSE_DENORMAL_AARCH64)
    std::uint64_t fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    const std::uint64_t want = fpcr | (std::uint64_t{1} << 24);
    if (want != fpcr) {
      saved_ = fpcr;
      __asm__ __volatile__("msr fpcr, %0" : : "r"(want) : "memory");
      active_ = true;
    }
#elif defined(HOOKFUSE_DENORMAL_ARM32)
    std::uint32_t fpscr;
    __asm__ __volatile__("vmrs %0, fpscr" : "=r"(fpscr));
    const std::uint32_t want = fpscr | (std::uint32_t{1} << 24);
    if (want != fpscr) {
      saved_ = fpscr;
      __asm__ __volatile__("vmsr fpscr, %0" : : "r"(want) : "memory");
      active_ = true;
    }
#endif
  }

  ~ScopedFlushDenormal() {
    if (!active_) return;
#if defined(HOOKFUSE_DENORMAL_X86)
    __asm__ __volatile__("" : : : "memory");
    const unsigned csr = _mm_getcsr();
    _mm_setcsr((csr & ~changed_x86()) | (static_cast<unsigned>(saved_) & changed_x86()));
#elif defined(HOOKFUSE_DENORMAL_AARCH64)
    constexpr std::uint64_t fz = std::uint64_t{1} << 24;
    std::uint64_t fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr) : : "memory");
    fpcr = (fpcr & ~fz) | (saved_ & fz);
    __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr) : "memory");
#elif defined(HOOKFUSE_DENORMAL_ARM32)
    constexpr std::uint32_t fz = std::uint32_t{1} << 24;
    std::uint32_t fpscr;
    __asm__ __volatile__("vmrs %0, fpscr" : "=r"(fpscr) : : "memory");
    fpscr = (fpscr & ~fz) | (static_cast<std::uint32_t>(saved_) & fz);
    __asm__ __volatile__("vmsr fpscr, %0" : : "r"(fpscr) : "memory");
#endif
  }

  ScopedFlushDenormal(const ScopedFlushDenormal&) = delete;
  ScopedFlushDenormal& operator=(const ScopedFlushDenormal&) = delete;

 private:
#if defined(HOOKFUSE_DENORMAL_X86)
  /// The MXCSR bits the scope sets: FTZ, and DAZ where available.
  static unsigned changed_x86() { return 0x8000u | (daz_available() ? 0x0040u : 0u); }
  /// DAZ exists on every CPU with SSE3 (TensorFlow's test); asked once per process.
  static bool daz_available() {
#if defined(__SSE3__)
    return true;  // the build already requires SSE3
#elif defined(__GNUC__)
    static const bool sse3 = __builtin_cpu_supports("sse3");
    return sse3;
#else
    return false;
#endif
  }
#endif

  std::uint64_t saved_ = 0;
  bool active_ = false;
};

}  // namespace hookfuse::detail
