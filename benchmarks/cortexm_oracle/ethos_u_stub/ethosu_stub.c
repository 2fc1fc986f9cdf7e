// Ethos-U driver stand-in (see include/ethosu_driver.h), our own code.
//
// Each invoke prints one line on stdout:
//   ORACLE npu_invoke cms_bytes=<command stream bytes> base_addrs=<n>
//       sizes=<bytes of base address 0>,<1>,...  offsets=<address - address of
//       base 1 (the TFLM arena tensor)>,...
// and returns 0.  The stub never reads or writes the tensors: outputs keep
// whatever the arena held.

#include <stdio.h>

#include "ethosu_driver.h"

struct ethosu_driver {
  int reserved;
};

static struct ethosu_driver the_driver;

struct ethosu_driver* ethosu_reserve_driver(void) { return &the_driver; }

void ethosu_release_driver(struct ethosu_driver* drv) { (void)drv; }

int ethosu_invoke_v3(struct ethosu_driver* drv, const void* custom_data_ptr,
                     const int custom_data_size, uint64_t* base_addr,
                     const size_t* base_addr_size, const int num_base_addr,
                     void* user_arg) {
  (void)drv;
  (void)custom_data_ptr;
  (void)user_arg;
  printf("ORACLE npu_invoke cms_bytes=%d base_addrs=%d sizes=", custom_data_size,
         num_base_addr);
  for (int i = 0; i < num_base_addr; ++i)
    printf(i ? ",%lu" : "%lu", (unsigned long)base_addr_size[i]);
  printf(" offsets=");
  const long long arena = num_base_addr > 1 ? (long long)base_addr[1] : 0;
  for (int i = 0; i < num_base_addr; ++i)
    printf(i ? ",%lld" : "%lld", (long long)base_addr[i] - arena);
  printf("\n");
  return 0;
}
