/* embedded/common/startup.c: a minimal Cortex-M4F start-up: the vector table, the reset handler
 * (FPU on, .data copied, .bss zeroed, static constructors, SysTick at 1 kHz, main) and the fault
 * handler. No C library start-up code is used (-nostartfiles). Written in C because C++ may not
 * call main. */
#include <stdint.h>

/* From the linker script. */
extern uint32_t __data_load__[], __data_start__[], __data_end__[];
extern uint32_t __bss_start__[], __bss_end__[];
extern uint32_t __stack_bottom__[], __stack_top__[];
extern void (*__init_array_start[])(void);
extern void (*__init_array_end[])(void);

int main(void);

/* Milliseconds since start (semihosting.hpp: cortex_m::SysTickClock). */
volatile uint32_t hookfuse_systick_ms = 0;

#define STACK_PAINT 0x5AA5C33Cu

/* Bytes of stack used so far: the stack is painted at reset, and the lowest word that no longer
 * holds the paint marks the deepest point reached. */
uint32_t hookfuse_stack_high_water(void) {
  const uint32_t* p = __stack_bottom__;
  while (p < __stack_top__ && *p == STACK_PAINT) ++p;
  return (uint32_t)((const char*)__stack_top__ - (const char*)p);
}

#define REG(address) (*(volatile uint32_t*)(address))
#define CPU_HZ 25000000u /* MPS2 AN386: 25 MHz */

static int semihosting_call(int op, const void* arg) {
  register int r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

static __attribute__((noreturn)) void semihosting_exit(int status) {
  /* SYS_EXIT_EXTENDED: ADP_Stopped_ApplicationExit with the status as subcode. */
  const uint32_t block[2] = {0x20026u, (uint32_t)status};
  semihosting_call(0x20, block);
  for (;;) __asm__ volatile("wfi");
}

__attribute__((noreturn)) void Reset_Handler(void) {
  /* CP10 and CP11 full access (the FPU), before any floating-point instruction runs. */
  REG(0xE000ED88) |= 0xFu << 20;
  __asm__ volatile("dsb\n\tisb" ::: "memory");
  for (uint32_t *src = __data_load__, *dst = __data_start__; dst < __data_end__;) *dst++ = *src++;
  for (uint32_t* dst = __bss_start__; dst < __bss_end__;) *dst++ = 0;
  {
    /* Paint the stack below this function's frame (64 bytes of margin). */
    uint32_t* sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    for (uint32_t* p = __stack_bottom__; p < sp - 16;) *p++ = STACK_PAINT;
  }
  for (void (**f)(void) = __init_array_start; f < __init_array_end; ++f) (*f)();
  REG(0xE000E014) = CPU_HZ / 1000 - 1; /* SYST_RVR: 1 kHz */
  REG(0xE000E018) = 0;                 /* SYST_CVR */
  REG(0xE000E010) = 0x7;               /* SYST_CSR: processor clock, interrupt, enable */
  semihosting_exit(main());
}

void SysTick_Handler(void) { hookfuse_systick_ms = hookfuse_systick_ms + 1; }

__attribute__((noreturn)) void Fault_Handler(void) {
  semihosting_call(0x04, "FATAL: hard fault\n");
  semihosting_exit(3);
}

void Default_Handler(void) {}

/* Cortex-M vector table: the initial stack pointer, then the 15 system exceptions. */
typedef void (*vector_t)(void);
__attribute__((section(".isr_vector"), used)) const vector_t vector_table[16] = {
    (vector_t)__stack_top__,
    Reset_Handler,
    Default_Handler, /* NMI */
    Fault_Handler,   /* HardFault */
    Fault_Handler,   /* MemManage */
    Fault_Handler,   /* BusFault */
    Fault_Handler,   /* UsageFault */
    0, 0, 0, 0,      /* reserved */
    Default_Handler, /* SVCall */
    Default_Handler, /* DebugMonitor */
    0,               /* reserved */
    Default_Handler, /* PendSV */
    SysTick_Handler, /* SysTick */
};
