// embedded/common/semihosting.hpp: Arm semihosting (the debugger or QEMU does the I/O) and the
// pieces a hookfuse program needs on bare metal: a logger, the error handler, a clock.
//
// Semihosting calls are `bkpt 0xAB` with the operation in r0 and its argument in r1. Under
// `qemu-system-arm -semihosting` they print on QEMU's stdout and end QEMU with a status; on a
// real board without a debugger attached they would hard-fault, so a port replaces this file
// (docs/embedded.md, "Porting to a board").
#pragma once

#include <cstdint>
#include <string_view>

#include <hookfuse/logging.hpp>

namespace semihosting {

inline constexpr int sys_write0 = 0x04;         // print a NUL-terminated string
inline constexpr int sys_exit_extended = 0x20;  // end the session with a status

inline int call(int op, const void* arg) {
  register int r0 asm("r0") = op;
  register const void* r1 asm("r1") = arg;
  asm volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

/// Prints `text` (in pieces of up to 63 characters: SYS_WRITE0 takes a NUL-terminated string).
inline void write(std::string_view text) {
  char buf[64];
  while (!text.empty()) {
    const std::size_t n = text.size() < sizeof buf - 1 ? text.size() : sizeof buf - 1;
    for (std::size_t i = 0; i < n; ++i) buf[i] = text[i];
    buf[n] = '\0';
    call(sys_write0, buf);
    text.remove_prefix(n);
  }
}

/// Ends the program; QEMU exits with `status`.
[[noreturn]] inline void exit(int status) {
  // ADP_Stopped_ApplicationExit with a subcode: the exit status.
  const std::uint32_t block[2] = {0x20026u, static_cast<std::uint32_t>(status)};
  call(sys_exit_extended, block);
  for (;;) asm volatile("wfi");
}

/// hookfuse logger policy: "INFO:hookfuse:<line>" over semihosting, like the hosted StderrLogger.
struct Logger {
  void log(hookfuse::Severity s, std::string_view line) const {
    write(hookfuse::severity_name(s));
    write(":hookfuse:");
    write(line);
    write("\n");
  }
};
static_assert(hookfuse::Logger<Logger>);

}  // namespace semihosting

/// Milliseconds since start, counted by the SysTick interrupt (started by startup.c).
extern "C" volatile std::uint32_t hookfuse_systick_ms;
/// Bytes of stack used so far (the deepest point reached; startup.c paints the stack).
extern "C" std::uint32_t hookfuse_stack_high_water();

namespace cortex_m {

/// hookfuse clock policy: seconds from SysTick (1 ms resolution), as float (hookfuse::host_float
/// of an embedded build: no double arithmetic).
struct SysTickClock {
  float now() const { return static_cast<float>(hookfuse_systick_ms) * 1e-3f; }
};

}  // namespace cortex_m
