/* embedded/riscv/startup.c: a minimal RV32 machine-mode start-up for QEMU's virt board: _start
 * (global and stack pointers, the FPU on when the target has one, the trap vector), then .data
 * copied, .bss zeroed, stack painted, static constructors, main, and the exit through the virt
 * board's test finisher, which ends QEMU with main's status. No C library start-up code is used
 * (-nostartfiles). */
#include <stdint.h>

#include "virt_io.h"

extern uint32_t __data_load__[], __data_start__[], __data_end__[];
extern uint32_t __bss_start__[], __bss_end__[];
extern uint32_t __stack_bottom__[], __stack_top__[];
extern void (*__init_array_start[])(void);
extern void (*__init_array_end[])(void);

int main(void);
void hookfuse_reset(void);
void hookfuse_trap(void);

#define STACK_PAINT 0x5AA5C33Cu

/* Bytes of stack used so far: the stack is painted at reset, and the lowest word that no longer
 * holds the paint marks the deepest point reached. */
uint32_t hookfuse_stack_high_water(void) {
  const uint32_t* p = __stack_bottom__;
  while (p < __stack_top__ && *p == STACK_PAINT) ++p;
  return (uint32_t)((const char*)__stack_top__ - (const char*)p);
}

/* Where QEMU starts (the first bytes of DRAM, virt.ld). mstatus.FS is off at reset: any
 * floating-point instruction would trap, so it is set to Initial before C code runs. */
__asm__(
    ".section .text.init, \"ax\", @progbits\n"
    ".globl _start\n"
    "_start:\n"
    "  .option arch, +zicsr\n" /* rv32imac alone has no CSR instructions in binutils 2.40 */
    "  .option push\n"
    "  .option norelax\n"
    "  la gp, __global_pointer$\n"
    "  .option pop\n"
    "  la sp, __stack_top__\n"
    "  la t0, hookfuse_trap\n"
    "  csrw mtvec, t0\n"
#ifdef __riscv_flen
    "  li t0, 0x2000\n" /* mstatus.FS = Initial */
    "  csrs mstatus, t0\n"
    "  csrw fcsr, zero\n"
#endif
    "  j hookfuse_reset\n"
    ".text\n");

__attribute__((noreturn)) void hookfuse_reset(void) {
  for (uint32_t *src = __data_load__, *dst = __data_start__; dst < __data_end__;) *dst++ = *src++;
  for (uint32_t* dst = __bss_start__; dst < __bss_end__;) *dst++ = 0;
  {
    /* Paint the stack below this function's frame (64 bytes of margin). */
    uint32_t* sp;
    __asm__ volatile("mv %0, sp" : "=r"(sp));
    for (uint32_t* p = __stack_bottom__; p < sp - 16;) *p++ = STACK_PAINT;
  }
  for (void (**f)(void) = __init_array_start; f < __init_array_end; ++f) (*f)();
  virt_exit(main());
}

/* Any exception (illegal instruction, misaligned or faulting access): report and exit 3. It
 * never returns, so it saves no registers (an interrupt("machine") handler of an F build saves
 * the FP registers, itself a trap when mstatus.FS is off). */
__attribute__((noreturn, aligned(4))) void hookfuse_trap(void) {
  uint32_t cause, epc;
  __asm__ volatile(".option push\n.option arch, +zicsr\ncsrr %0, mcause\n.option pop" : "=r"(cause));
  __asm__ volatile(".option push\n.option arch, +zicsr\ncsrr %0, mepc\n.option pop" : "=r"(epc));
  virt_uart_write("FATAL: trap, mcause 0x");
  virt_uart_write_hex(cause);
  virt_uart_write(", mepc 0x");
  virt_uart_write_hex(epc);
  virt_uart_write("\n");
  virt_exit(3);
}
