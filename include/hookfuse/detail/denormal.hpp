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
//   anything else  nothing (`supported` is false): denormals are computed as IEEE 754 says.
// The mode is per thread: only the calling thread's arithmetic is affected.
#pragma once

#include <cstdint>

#if defined(__x86_64__) || defined(__i386__) || defined(_M_X64)
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
/// Not copyable. Cost: one read and two writes of the control register per scope. The mode
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
#if defined(HOOKFUSE_DENORMAL_X86)
    saved_ = _mm_getcsr();
    constexpr unsigned ftz = 0x8000u, daz = 0x0040u;
    _mm_setcsr(static_cast<unsigned>(saved_) | ftz | (daz_available() ? daz : 0u));
    __asm__ __volatile__("" : : : "memory");
    active_ = true;
#elif defined(HOOKFUSE_DENORMAL_AARCH64)
    std::uint64_t fpcr;
    __asm__ __volatile__("mrs %0, fpcr" : "=r"(fpcr));
    saved_ = fpcr;
    fpcr |= std::uint64_t{1} << 24;
    __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr) : "memory");
    active_ = true;
#elif defined(HOOKFUSE_DENORMAL_ARM32)
    std::uint32_t fpscr;
    __asm__ __volatile__("vmrs %0, fpscr" : "=r"(fpscr));
    saved_ = fpscr;
    fpscr |= std::uint32_t{1} << 24;
    __asm__ __volatile__("vmsr fpscr, %0" : : "r"(fpscr) : "memory");
    active_ = true;
#endif
  }

  ~ScopedFlushDenormal() {
    if (!active_) return;
#if defined(HOOKFUSE_DENORMAL_X86)
    __asm__ __volatile__("" : : : "memory");
    _mm_setcsr(static_cast<unsigned>(saved_));
#elif defined(HOOKFUSE_DENORMAL_AARCH64)
    const std::uint64_t fpcr = saved_;
    __asm__ __volatile__("msr fpcr, %0" : : "r"(fpcr) : "memory");
#elif defined(HOOKFUSE_DENORMAL_ARM32)
    const auto fpscr = static_cast<std::uint32_t>(saved_);
    __asm__ __volatile__("vmsr fpscr, %0" : : "r"(fpscr) : "memory");
#endif
  }

  ScopedFlushDenormal(const ScopedFlushDenormal&) = delete;
  ScopedFlushDenormal& operator=(const ScopedFlushDenormal&) = delete;

 private:
#if defined(HOOKFUSE_DENORMAL_X86)
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
