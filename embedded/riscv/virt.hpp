// embedded/riscv/virt.hpp: the hookfuse policies for QEMU's riscv virt board: a logger on the
// UART, the clock from the CLINT's mtime, the exit through the test finisher (virt_io.h).
#pragma once

#include <cstdint>
#include <string_view>

#include <hookfuse/logging.hpp>

#include "virt_io.h"

/// Bytes of stack used so far (the deepest point reached; startup.c paints the stack).
extern "C" std::uint32_t hookfuse_stack_high_water();

namespace riscv_virt {

inline void write(std::string_view text) { virt_uart_write_n(text.data(), text.size()); }

[[noreturn]] inline void exit(int status) { virt_exit(status); }

/// hookfuse logger policy: "INFO:hookfuse:<line>" on the UART, like the hosted StderrLogger.
struct Logger {
  void log(hookfuse::Severity s, std::string_view line) const {
    write(hookfuse::severity_name(s));
    write(":hookfuse:");
    write(line);
    write("\n");
  }
};
static_assert(hookfuse::Logger<Logger>);

/// hookfuse clock policy: seconds from mtime (10 MHz on virt), as float (hookfuse::host_float
/// of an embedded build). From the two 32-bit halves: libgcc's uint64-to-float conversion goes
/// through software double arithmetic on rv32imafc, and a 64-bit division is a libgcc call.
struct MtimeClock {
  float now() const {
    const std::uint64_t t = virt_mtime();
    constexpr float tick = 1.0f / static_cast<float>(VIRT_TIMEBASE_HZ);
    return static_cast<float>(static_cast<std::uint32_t>(t >> 32)) * (4294967296.0f * tick) +
           static_cast<float>(static_cast<std::uint32_t>(t)) * tick;
  }
};

}  // namespace riscv_virt
