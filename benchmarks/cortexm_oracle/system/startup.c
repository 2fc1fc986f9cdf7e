// Bare-metal start-up for the oracle driver on QEMU's M-profile boards
// (qemu-system-arm -M mps3-an547 / mps2-an385 / mps2-an386 / mps2-an500 /
// mps2-an505), our own code.
//
// What it does, in order: a vector table (initial stack pointer, reset and
// fault handlers); on reset, grants full access to the FPU / MVE coprocessors
// (CP10, CP11) when the core has them, zeroes .bss, runs the C/C++ static
// constructors, opens newlib's semihosting stdio handles (librdimon), reads
// the command line through the semihosting call SYS_GET_CMDLINE, splits it
// on spaces into argv and calls exit(main(argc, argv)).  A fault prints
// "ORACLE fault <exception number> pc=<stacked pc>" and stops QEMU with a
// run-time-error exit.  The heap (newlib's _sbrk) grows from the linker
// symbol `end` up to the stack pointer (see mps.ld).

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern uint32_t __bss_start__[];
extern uint32_t __bss_end__[];
extern uint32_t __stack_top[];

int main(int argc, char** argv);
void __libc_init_array(void);
void initialise_monitor_handles(void);

// What gcc's crti / crtbegin would provide (not linked: -nostartfiles): empty
// _init / _fini for __libc_init_array / __libc_fini_array, and the handle C++
// static destructors register under (__cxa_atexit).
void _init(void) {}
void _fini(void) {}
void* __dso_handle = &__dso_handle;

enum {
  kSysWrite0 = 0x04,
  kSysGetCmdline = 0x15,
  kSysExit = 0x18,
  kAdpStoppedRunTimeError = 0x20023,
};

static inline uintptr_t Semihost(uintptr_t op, const void* arg) {
  register uintptr_t r0 __asm__("r0") = op;
  register const void* r1 __asm__("r1") = arg;
  __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

static char cmdline[4096];
static char* argv_store[64];

static int ParseCommandLine(void) {
  struct {
    char* buf;
    int len;
  } block = {cmdline, (int)sizeof(cmdline) - 1};
  if (Semihost(kSysGetCmdline, &block) != 0) return 0;
  cmdline[block.len < 0 ? 0 : block.len] = '\0';
  int argc = 0;
  char* p = cmdline;
  while (*p != '\0' && argc < 63) {
    while (*p == ' ') *p++ = '\0';
    if (*p == '\0') break;
    argv_store[argc++] = p;
    while (*p != '\0' && *p != ' ') ++p;
  }
  argv_store[argc] = NULL;
  return argc;
}

static void Hex32(char* out, uint32_t v) {
  for (int i = 7; i >= 0; --i) {
    out[i] = "0123456789abcdef"[v & 0xfu];
    v >>= 4;
  }
}

// Exception entry: r0 = exception number, r1 = the stacked frame.
void FaultReport(uint32_t exception, const uint32_t* frame) {
  char msg[] = "\nORACLE fault xx pc=xxxxxxxx\n";
  msg[14] = (char)('0' + (exception / 10) % 10);
  msg[15] = (char)('0' + exception % 10);
  Hex32(msg + 20, frame[6]);
  Semihost(kSysWrite0, msg);
  uintptr_t reason = kAdpStoppedRunTimeError;
  Semihost(kSysExit, (const void*)reason);
  for (;;) {
  }
}

__attribute__((naked)) void FaultHandler(void) {
  // Thumb-1 only, so that the same code serves Armv6-M.
  __asm__ volatile(
      "movs r0, #4\n"
      "mov r1, lr\n"
      "tst r0, r1\n"
      "beq 1f\n"
      "mrs r1, psp\n"
      "b 2f\n"
      "1: mrs r1, msp\n"
      "2: mrs r0, ipsr\n"
      "ldr r2, =FaultReport\n"
      "bx r2\n");
}

__attribute__((noreturn)) void ResetHandler(void) {
#if defined(__ARM_FP) || defined(__ARM_FEATURE_MVE)
  // CPACR: full access to CP10 and CP11 (FPU and, on Armv8.1-M, MVE).
  volatile uint32_t* cpacr = (volatile uint32_t*)0xE000ED88u;
  *cpacr |= (0xFu << 20);
  __asm__ volatile("dsb\n isb" ::: "memory");
#endif
  memset(__bss_start__, 0,
         (size_t)((char*)__bss_end__ - (char*)__bss_start__));
  __libc_init_array();
  initialise_monitor_handles();
  int argc = ParseCommandLine();
  exit(main(argc, argv_store));
}

typedef void (*Vector)(void);

__attribute__((section(".vectors"), used)) const Vector vector_table[16] = {
    (Vector)(uintptr_t)__stack_top,  // initial main stack pointer
    ResetHandler,
    FaultHandler,  // NMI
    FaultHandler,  // HardFault
    FaultHandler,  // MemManage
    FaultHandler,  // BusFault
    FaultHandler,  // UsageFault
    FaultHandler,  // SecureFault (Armv8-M)
    0,
    0,
    0,
    FaultHandler,  // SVCall
    FaultHandler,  // DebugMonitor
    0,
    FaultHandler,  // PendSV
    FaultHandler,  // SysTick
};
