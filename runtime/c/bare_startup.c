/* Start-up code for an exported model's example on a Cortex-M board (linked by link.ld):
 * the vector table, a reset handler that copies .data, zeroes .bss, turns the FPU on where
 * the build uses it and calls main, fault handlers that say what happened, and the Arm
 * semihosting call through which the example reaches the host's console and files (QEMU
 * with -semihosting-config enable=on, or a debugger). Replace it with the board vendor's
 * start-up code in a real product. */
#include <stdint.h>

extern uint32_t __data_load[], __data_start[], __data_end[], __bss_start[], __bss_end[];
extern uint32_t __stack_top[];
int main(void);

/* One semihosting request: `op` with its parameter block; returns what the host says. */
int semihost_call(int op, void* arg) {
  register int r0 __asm__("r0") = op;
  register void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

void semihost_exit(int code) {
  /* SYS_EXIT with ADP_Stopped_ApplicationExit (0) or ADP_Stopped_RunTimeErrorUnknown. */
  semihost_call(0x18, (void*)(uintptr_t)(code == 0 ? 0x20026u : 0x20023u));
  for (;;) {
  }
}

static void fault(void) {
  semihost_call(0x04, (void*)"model: the processor took a fault (HardFault or another)\n");
  semihost_exit(1);
}

void reset_handler(void) {
  const uint32_t* from = __data_load;
  for (uint32_t* to = __data_start; to < __data_end;)
    *to++ = *from++;
  for (uint32_t* to = __bss_start; to < __bss_end;)
    *to++ = 0;
#if defined(__ARM_FP)
  *(volatile uint32_t*)0xE000ED88u |= 0xFu << 20; /* CPACR: coprocessors 10 and 11 on */
  __asm__ volatile("dsb\n\tisb" ::: "memory");
#endif
  semihost_exit(main());
}

typedef void (*lathe_vector)(void);
__attribute__((section(".vectors"), used)) static const lathe_vector vectors[16] = {
    (lathe_vector)(uintptr_t)__stack_top, /* initial stack pointer */
    reset_handler,
    fault, /* NMI */
    fault, /* HardFault */
    fault, /* MemManage */
    fault, /* BusFault */
    fault, /* UsageFault */
    fault, /* SecureFault */
    0,
    0,
    0,
    fault, /* SVCall */
    fault, /* DebugMonitor */
    0,
    fault, /* PendSV */
    fault, /* SysTick */
};
