/* What the RV32 C toolchain gives where C leaves the result undefined, as TFLM's
 * requantisation code reaches it at extreme scales: int shifts by counts of 32 or more,
 * float / double -> int32 / int64 conversions of out-of-range values, inf and nan.
 * Our own probe (no third-party code). Compiled for each RV32 flavour with the esp
 * oracle's toolchain and run under qemu-system-riscv32 -M virt with semihosting; see
 * benchmarks/esp_oracle/README.md ("C semantics probe"). Every value comes through a
 * volatile so that nothing is folded at compile time. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <math.h>

static volatile float vf[] = {3e9f, -3e9f, 1e30f, -1e30f, INFINITY, -INFINITY, NAN, -NAN,
                              2147483520.0f, -2147483648.0f};
static volatile double vd[] = {3e9, -3e9, 1e300, -1e300, INFINITY, -INFINITY, NAN, -NAN,
                               9.3e18, -9.3e18};
static volatile int vs[] = {31, 32, 33, 40, 63, 64, 65, 100, 255, 256, 257,
                           -1, -5, -31, -32, -33, -40, -64, -65};
static volatile int32_t vx = -123456789;
static volatile int64_t vx64 = -1234567890123LL;

static const char *bits_f(float f, char *buf) {
  uint32_t u; memcpy(&u, &f, 4); sprintf(buf, "0x%08lx", (unsigned long)u); return buf;
}

int main(void) {
  char b[16];
  unsigned n = sizeof vf / sizeof vf[0];
  for (unsigned i = 0; i < n; i++) {
    float f = vf[i];
    double d = vd[i];
    printf("PROBE f2i32 %s %ld\n", bits_f(f, b), (long)(int32_t)f);
    printf("PROBE f2i64 %s %lld\n", bits_f(f, b), (long long)(int64_t)f);
    printf("PROBE d2i32 %g %ld\n", d, (long)(int32_t)d);
    printf("PROBE d2i64 %g %lld\n", d, (long long)(int64_t)d);
  }
  /* nan made by arithmetic (its sign as the FPU / soft-fp produces it) */
  volatile float zf = 0.0f; volatile double zd = 0.0;
  float nf = zf / zf; double nd = zd / zd;
  float nfm = -(zf / zf);
  printf("PROBE arith-nan-f %s i32 %ld\n", bits_f(nf, b), (long)(int32_t)nf);
  printf("PROBE neg-arith-nan-f %s i32 %ld\n", bits_f(nfm, b), (long)(int32_t)nfm);
  printf("PROBE arith-nan-d i32 %ld i64 %lld\n", (long)(int32_t)nd, (long long)(int64_t)nd);
  /* nan times a power of two, then round (QuantizeMultiplier's path) */
  double q = -vd[6];
  printf("PROBE neg-nan-times-2^31-round i64 %lld\n", (long long)(int64_t)round(q * (double)(1LL << 31)));
  float qf = -vf[6];
  printf("PROBE neg-nanf-times-2^31-roundf i32 %ld\n", (long)(int32_t)roundf(qf * 2147483648.0f));
  n = sizeof vs / sizeof vs[0];
  for (unsigned i = 0; i < n; i++) {
    int s = vs[i];
    printf("PROBE shl32 %d %ld\n", s, (long)(int32_t)(1 << s));
    printf("PROBE sar32 %d %ld\n", s, (long)(vx >> s));
    printf("PROBE shl64 %d %lld\n", s, (long long)((int64_t)1 << s));
    printf("PROBE sar64 %d %lld\n", s, (long long)(vx64 >> s));
  }
  return 0;
}
