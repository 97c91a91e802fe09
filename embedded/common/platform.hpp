// embedded/common/platform.hpp: the platform layer of the embedded examples (mcu_train,
// kws_train, mcu_resume), one of three, chosen at compile time:
//
//   EMBEDDED_BARE_METAL and __riscv   QEMU's riscv virt board: UART, mtime, test finisher
//                                     (embedded/riscv/virt.hpp)
//   EMBEDDED_BARE_METAL               Cortex-M4F on the MPS2 AN386: semihosting, SysTick
//                                     (embedded/common/semihosting.hpp)
//   neither                           the host: stdout, hookfuse::SteadyClock
//
// namespace platform holds the hookfuse policies `Logger` ("INFO:hookfuse:<line>", the format
// of the hosted StderrLogger) and `Clock` (seconds as hookfuse::host_float), `print(text)` (the
// text as it is, no newline added), `print_value(name, v)` (a "<name>: <v>" line) and, on a
// board, `exit(status)` (QEMU exits with `status`).
//
// The file also defines hookfuse::error_handler, where every hookfuse error ends in a build
// without exceptions: on a board it prints "FATAL:hookfuse:<what>" and exits with status 2
// (with HOOKFUSE_STRIP_ERROR_STRINGS, `what` is one fixed text: hookfuse/config.hpp). So a
// program includes this file from one translation unit only, its main.cpp, by its relative
// path ("../common/platform.hpp"): the host builds have no embedded include directory.
#pragma once

#include <cstddef>
#include <string_view>

#include <hookfuse/hookfuse.hpp>

#if defined(EMBEDDED_BARE_METAL) && defined(__riscv)
#include "virt.hpp"  // from embedded/riscv, on the RV32 build's include path

namespace platform {  // QEMU's riscv virt board: UART, mtime, test finisher
using Logger = riscv_virt::Logger;
using Clock = riscv_virt::MtimeClock;
inline void print(std::string_view text) { riscv_virt::write(text); }
[[noreturn]] inline void exit(int status) { riscv_virt::exit(status); }
}  // namespace platform
#elif defined(EMBEDDED_BARE_METAL)
#include "semihosting.hpp"

namespace platform {  // Cortex-M4F: semihosting, SysTick
using Logger = semihosting::Logger;
using Clock = cortex_m::SysTickClock;
inline void print(std::string_view text) { semihosting::write(text); }
[[noreturn]] inline void exit(int status) { semihosting::exit(status); }
}  // namespace platform
#endif

#ifdef EMBEDDED_BARE_METAL
[[noreturn]] void hookfuse::error_handler(std::string_view what) {
  platform::print("FATAL:hookfuse:");
  platform::print(what);
  platform::print("\n");
  platform::exit(2);
}
#else
#include <cstdio>
#include <cstdlib>

namespace platform {  // the host: stdout
struct Logger {  // the semihosting logger's format, on stdout
  void log(hookfuse::Severity s, std::string_view line) const {
    std::printf("%s:hookfuse:%.*s\n", hookfuse::severity_name(s), static_cast<int>(line.size()),
                line.data());
  }
};
using Clock = hookfuse::SteadyClock;
inline void print(std::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); }
}  // namespace platform

#ifdef HOOKFUSE_NO_EXCEPTIONS
[[noreturn]] void hookfuse::error_handler(std::string_view what) {
  std::fprintf(stderr, "FATAL:hookfuse:%.*s\n", static_cast<int>(what.size()), what.data());
  std::exit(2);
}
#endif
#endif

namespace platform {

/// Prints "<name>: <v>\n", `v` as printf's %g; T is float or double (hookfuse::host_float: double
/// on the host, float on a board). The line is cut at 47 characters.
template <class T>
void print_value(std::string_view name, T v) {
  char line[48];
  char* out = line;
  hookfuse::detail::append_text(out, line + sizeof line, name);
  hookfuse::detail::append_text(out, line + sizeof line, ": ");
  hookfuse::detail::append_g(out, line + sizeof line, v);
  hookfuse::detail::append_text(out, line + sizeof line, "\n");
  print(std::string_view(line, static_cast<std::size_t>(out - line)));
}

}  // namespace platform
