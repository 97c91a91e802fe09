/* embedded/riscv/virt_io.h: the two devices of QEMU's riscv virt board that the examples use,
 * for C and C++: the NS16550 UART at 0x10000000 (output; QEMU's -nographic puts it on stdout)
 * and the SiFive test finisher at 0x100000 (exit: QEMU ends with the status written). A real
 * board replaces this file: its UART, and a reset or a halt instead of the finisher. */
#ifndef HOOKFUSE_EMBEDDED_RISCV_VIRT_IO_H
#define HOOKFUSE_EMBEDDED_RISCV_VIRT_IO_H

#include <stddef.h>
#include <stdint.h>

#define VIRT_UART0 0x10000000u    /* NS16550A, registers one byte apart */
#define VIRT_FINISHER 0x00100000u /* sifive_test */
#define VIRT_CLINT_MTIME 0x0200BFF8u
#define VIRT_TIMEBASE_HZ 10000000u /* mtime's rate on virt */

static inline void virt_uart_putc(char c) {
  volatile uint8_t* const uart = (volatile uint8_t*)VIRT_UART0;
  while ((uart[5] & 0x20u) == 0) {} /* LSR.THRE: the transmit register is empty */
  uart[0] = (uint8_t)c;
}

static inline void virt_uart_write_n(const char* text, size_t n) {
  for (size_t i = 0; i < n; ++i) virt_uart_putc(text[i]);
}

static inline void virt_uart_write(const char* text) {
  while (*text) virt_uart_putc(*text++);
}

static inline void virt_uart_write_hex(uint32_t v) {
  for (int shift = 28; shift >= 0; shift -= 4) virt_uart_putc("0123456789abcdef"[(v >> shift) & 0xFu]);
}

/* Ends the program: QEMU exits with `status` (FINISHER_PASS for 0, FINISHER_FAIL with the code
 * otherwise). */
static inline __attribute__((noreturn)) void virt_exit(int status) {
  volatile uint32_t* const finisher = (volatile uint32_t*)VIRT_FINISHER;
  *finisher = status == 0 ? 0x5555u : (((uint32_t)status & 0xFFFFu) << 16) | 0x3333u;
  for (;;) __asm__ volatile("wfi");
}

/* mtime, 64 bits read as two halves (the high half again to catch a carry). */
static inline uint64_t virt_mtime(void) {
  volatile uint32_t* const mtime = (volatile uint32_t*)VIRT_CLINT_MTIME;
  uint32_t hi, lo;
  do {
    hi = mtime[1];
    lo = mtime[0];
  } while (hi != mtime[1]);
  return ((uint64_t)hi << 32) | lo;
}

#endif
