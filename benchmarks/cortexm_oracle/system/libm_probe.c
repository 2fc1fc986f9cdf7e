/* Writes f(x) for 2^20 float32 bit patterns (i * 4093 mod 2^32) to <name>.bin through
 * semihosting, for newlib's float functions as a Cortex-M build links them (see
 * tests/data/newlib/hard_float.json). Edit the output path before use. */
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#define N (1u << 20)
static float out[4096];
static void run(const char *name, float (*f)(float)) {
  char path[64]; snprintf(path, sizeof path, "/work/oracle/arm/libm/%s.bin", name);
  FILE *fp = fopen(path, "wb");
  for (uint32_t i = 0; i < N; i += 4096) {
    for (uint32_t j = 0; j < 4096; ++j) {
      uint32_t b = (i + j) * 4093u; float x; memcpy(&x, &b, 4); out[j] = f(x);
    }
    fwrite(out, 4, 4096, fp);
  }
  fclose(fp);
  printf("%s done\n", name);
}
int main(void) {
  run("expf", expf); run("tanhf", tanhf); run("expm1f", expm1f); run("logf", logf);
  run("sinf", sinf); run("cosf", cosf);
  return 0;
}
